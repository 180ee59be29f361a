// "Recordings": the asciicast recordings in this server's state directory,
// newest first, each with a link to replay it (also after its execution's
// record is gone: recordings have their own retention). Polled from
// RECORDINGS_API_PATH with the secret in a header.
import * as P from "./protocol";
import { labelCells } from "./table_cards";

const POLL_MS = 5000;

const byId = (id: string) => document.getElementById(id) as HTMLElement;

let lastView = "";

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function render(recordings: P.RecordingEntry[], token: string): void {
  const body = byId("recordings-body") as HTMLTableSectionElement;
  body.replaceChildren();
  const fragment = `#${P.TOKEN_FRAGMENT_KEY}=${encodeURIComponent(token)}`;
  for (const r of recordings) {
    const row = body.insertRow();
    row.dataset.recordingId = r.id;
    const title = row.insertCell();
    title.className = "command";
    const replay = document.createElement("a");
    replay.className = "replay-link";
    replay.href = `${P.REPLAY_PAGE_PREFIX}${encodeURIComponent(r.id)}${fragment}`;
    replay.textContent = r.title || r.id;
    replay.title = `replay ${r.id}`;
    title.append(replay);
    row.insertCell().textContent = r.started_at ? new Date(r.started_at).toLocaleString() : "";
    row.insertCell().textContent = formatBytes(r.bytes);
    const live = row.insertCell();
    if (r.terminal_path) {
      const a = document.createElement("a");
      a.href = `${r.terminal_path}${fragment}`;
      a.textContent = r.running ? "running: watch live" : "ended: its terminal";
      live.append(a);
    }
    labelCells(byId("recordings") as HTMLTableElement, row, []);
  }
  const empty = byId("recordings-message");
  empty.textContent = recordings.length === 0 ? "No recordings yet." : "";
  empty.hidden = recordings.length > 0;
}

async function poll(token: string): Promise<void> {
  try {
    const list = await P.getJson<{ recordings: P.RecordingEntry[] }>(P.RECORDINGS_API_PATH, token);
    const view = JSON.stringify(list.recordings);
    if (view !== lastView) {
      lastView = view;
      render(list.recordings, token);
    }
  } catch {
    lastView = "";
    byId("recordings-body").replaceChildren();
    const message = byId("recordings-message");
    message.textContent = "Cannot list the recordings (this server is not reachable).";
    message.hidden = false;
  }
}

export function startRecordingList(token: string): void {
  void poll(token);
  setInterval(() => void poll(token), POLL_MS);
}
