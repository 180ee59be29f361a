// The dashboard: every execution of this agentty server, live. A handoff
// request (the agent asking a person to take over) is highlighted at the top.
import "./dashboard.css";
import * as P from "./protocol";
import { startServerList } from "./servers";

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const token = P.tokenFromFragment(location.hash);

let executions: P.ExecutionSummary[] = [];
let receivedAt = Date.now();
let everConnected = false;
let connected = false;

function formatDuration(ms: number | null): string {
  if (ms === null || ms < 0) return "";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function cell(row: HTMLTableRowElement, text: string, className = ""): HTMLTableCellElement {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function statusText(e: P.ExecutionSummary): string {
  if (e.status === "running") return "running";
  if (e.exit_code !== null) return `${e.status} (exit ${e.exit_code})`;
  if (e.signal) return `${e.status} (${e.signal})`;
  return e.status;
}

function render(): void {
  const body = byId("executions-body") as HTMLTableSectionElement;
  body.replaceChildren();
  const elapsed = Date.now() - receivedAt;
  const handoffs = executions.filter((e) => e.handoff_reason && !e.held && e.status === "running");
  for (const e of executions) {
    const row = body.insertRow();
    row.dataset.executionId = e.execution_id;
    row.dataset.status = e.status;
    if (e.handoff_reason && !e.held) row.classList.add("handoff");
    if (e.held) row.classList.add("held");
    const name = row.insertCell();
    const link = document.createElement("a");
    link.href = `${e.terminal_path}#${P.TOKEN_FRAGMENT_KEY}=${encodeURIComponent(token)}`;
    link.textContent = e.name || e.execution_id;
    link.className = "terminal-link";
    name.append(link);
    if (e.name) cell(row, e.execution_id, "id");
    else cell(row, "", "id");
    cell(row, statusText(e), `status status-${e.status}`);
    cell(row, e.command, "command");
    cell(row, e.purpose, "purpose");
    const idle = e.status === "running" && e.idle_ms !== null ? e.idle_ms + elapsed : null;
    cell(row, formatDuration(idle), "idle");
    const flags: string[] = [];
    if (e.held) flags.push(`held by ${e.held_by}`);
    if (e.waiting_for_input && e.status === "running") flags.push("waiting for input");
    cell(row, flags.join(", "), "flags");
    cell(row, e.handoff_reason ? `Handoff: ${e.handoff_reason}` : "", "handoff-reason");
  }
  byId("empty").hidden = executions.length > 0;
  const banner = byId("handoffs");
  banner.hidden = handoffs.length === 0;
  banner.textContent =
    handoffs.length === 1
      ? `The agent asks you to take over ${handoffs[0].name || handoffs[0].execution_id}: ${handoffs[0].handoff_reason}`
      : `${handoffs.length} executions ask you to take over.`;
  document.title = `${handoffs.length ? `(${handoffs.length}!) ` : ""}agentty`;
}

function showMessage(text: string): void {
  const element = byId("message");
  element.textContent = text;
  element.hidden = text === "";
}

function connect(): void {
  if (!token) {
    showMessage("This link has no #token=... fragment. Open the dashboard URL that agentty printed.");
    return;
  }
  const ws = P.openSocket(P.DASHBOARD_SOCKET_PATH, token);
  ws.onopen = () => {
    everConnected = true;
    connected = true;
    document.body.dataset.connected = "yes";
    showMessage("");
  };
  ws.onmessage = (event) => {
    if (typeof event.data !== "string") return;
    const message = JSON.parse(event.data) as P.ServerMessage;
    if (message.type !== P.MESSAGE_EXECUTIONS) return;
    executions = message.executions;
    receivedAt = Date.now();
    render();
  };
  ws.onclose = () => {
    document.body.dataset.connected = "no";
    if (connected) {
      connected = false;
      showMessage("Disconnected from agentty; reconnecting… (the list below is as last seen)");
      setTimeout(connect, 1000);
      return;
    }
    void explainRefusal();
  };
}

// A WebSocket that fails does not say why: ask the API. A 404 means this
// secret is not the server's (a restart makes a new one): that will not
// change, so the page stops there.
async function explainRefusal(): Promise<void> {
  let status = 0;
  try {
    const response = await fetch(P.EXECUTIONS_API_PATH, {
      headers: { [P.TOKEN_HEADER]: token },
      cache: "no-store",
    });
    status = response.status;
  } catch {
    // Nothing listens there: status stays 0.
  }
  if (status === 404) {
    document.body.dataset.connected = "gone";
    executions = [];
    render();
    showMessage(
      `Cannot connect: this dashboard link is outdated. agentty at ${location.host} was ` +
        "restarted (each start makes a new secret). Open the dashboard URL it gives now " +
        "(STATE_DIR/web-url, or what `agentty serve` prints).",
    );
    return;
  }
  showMessage(
    status === 0
      ? `Cannot connect: agentty is not running at ${location.host}; retrying…` +
          (everConnected ? " (the list below is as last seen)" : "")
      : "Cannot connect to agentty; retrying…",
  );
  setTimeout(connect, everConnected ? 1000 : 5000);
}

setInterval(render, 1000);
render();
connect();
if (token) startServerList(token);
