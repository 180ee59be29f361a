// The dashboard: every execution of this agentty server, live. A handoff
// request (the agent asking a person to take over) is highlighted at the top.
import "./dashboard.css";
import * as P from "./protocol";
import { startRecordingList } from "./recordings";
import { startServerList } from "./servers";
import { labelCells } from "./table_cards";

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

function statusText(e: P.ExecutionSummary): string {
  if (e.status === "running") return "running";
  if (e.exit_code !== null) return `${e.status} (exit ${e.exit_code})`;
  if (e.signal) return `${e.status} (${e.signal})`;
  return e.status;
}

function failed(e: P.ExecutionSummary): boolean {
  return P.exitedNonZero(e) || ["failed", "failed_to_start", "timed_out"].includes(e.status);
}

// How many there are, run and failed: what a person takes in before the rows.
function countsText(): string {
  if (executions.length === 0) return "";
  const running = executions.filter((e) => e.status === "running").length;
  const failures = executions.filter(failed).length;
  const parts = [`${executions.length} execution${executions.length === 1 ? "" : "s"}`];
  if (running) parts.push(`${running} running`);
  if (failures) parts.push(`${failures} failed`);
  return parts.join(", ");
}

function terminalHref(e: P.ExecutionSummary): string {
  return `${e.terminal_path}#${P.TOKEN_FRAGMENT_KEY}=${encodeURIComponent(token)}`;
}

// Rows are updated in place, never rebuilt: the list changes every second
// while output flows, and a link replaced between the press and the release
// of a click is a click lost.
function render(): void {
  const body = byId("executions-body") as HTMLTableSectionElement;
  const elapsed = Date.now() - receivedAt;
  const old = new Map(Array.from(body.rows, (row) => [row.dataset.executionId, row]));
  // Newest first, as `ps` lists them: what runs now is at the top of a long
  // list (the server sends them oldest first).
  [...executions].reverse().forEach((e, index) => {
    const row = old.get(e.execution_id) ?? newRow();
    old.delete(e.execution_id);
    fillRow(row, e, elapsed);
    if (body.rows[index] !== row) body.insertBefore(row, body.rows[index] ?? null);
  });
  for (const row of old.values()) row.remove();
  byId("empty").hidden = executions.length > 0;
  setText(byId("counts"), countsText());
  renderHandoffs(executions.filter((e) => e.handoff_reason && !e.held && e.status === "running"));
}

const CELL_CLASSES = ["name", "id", "status", "command", "purpose", "idle", "flags", "handoff-reason"];

function newRow(): HTMLTableRowElement {
  const row = document.createElement("tr");
  for (const name of CELL_CLASSES) row.insertCell().className = name;
  labelCells(byId("executions") as HTMLTableElement, row, ["name", "handoff-reason"]);
  const link = document.createElement("a");
  link.className = "terminal-link";
  row.cells[0].append(link);
  return row;
}

function fillRow(row: HTMLTableRowElement, e: P.ExecutionSummary, elapsed: number): void {
  row.dataset.executionId = e.execution_id;
  row.dataset.status = e.status;
  row.classList.toggle("handoff", !!e.handoff_reason && !e.held);
  row.classList.toggle("held", e.held);
  const [name, id, status, command, purpose, idle, flags, handoff] = Array.from(row.cells);
  const link = name.firstElementChild as HTMLAnchorElement;
  setAttribute(link, "href", terminalHref(e));
  setText(link, e.name || e.execution_id);
  setText(id, e.name ? e.execution_id : "");
  setText(status, statusText(e));
  setAttribute(status, "class", `status status-${e.status}${P.exitedNonZero(e) ? " status-exit-nonzero" : ""}`);
  // Where it runs matters as much as what: "build1: make".
  setText(command, e.host ? `${e.host}: ${e.command}` : e.command);
  setAttribute(command, "title", e.host ? `on ${e.host}` : "on this machine");
  setText(purpose, e.purpose);
  // A program that has printed nothing yet (a sleep, a silent build step) has
  // been quiet since it started.
  const quietMs = e.idle_ms ?? e.duration_ms;
  const idleMs = e.status === "running" ? quietMs + elapsed : null;
  setText(idle, formatDuration(idleMs));
  const flagList: string[] = [];
  if (e.held) flagList.push(`held by ${e.held_by}`);
  if (e.waiting_for_input && e.status === "running") flagList.push("waiting for input");
  setText(flags, flagList.join(", "));
  setText(handoff, e.handoff_reason ? `Handoff: ${e.handoff_reason}` : "");
}

function renderHandoffs(handoffs: P.ExecutionSummary[]): void {
  const banner = byId("handoffs");
  banner.hidden = handoffs.length === 0;
  const key = JSON.stringify(handoffs.map((e) => [e.execution_id, e.name, e.handoff_reason]));
  if (banner.dataset.key === key) return;
  banner.dataset.key = key;
  banner.replaceChildren();
  if (handoffs.length === 1) {
    // One request: the banner itself leads to the terminal to take over.
    const e = handoffs[0];
    const link = document.createElement("a");
    link.href = terminalHref(e);
    link.textContent = e.name || e.execution_id;
    banner.append("The agent asks you to take over ", link, `: ${e.handoff_reason}`);
  } else {
    banner.textContent = `${handoffs.length} executions ask you to take over.`;
  }
  // Which server's dashboard: each agent's server has its own, on its own port.
  document.title = `${handoffs.length ? `(${handoffs.length}!) ` : ""}agentty dashboard ${location.host}`;
}

function setText(element: Element, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

function setAttribute(element: Element, name: string, value: string): void {
  if (element.getAttribute(name) !== value) element.setAttribute(name, value);
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
    document.body.dataset.updates = String(Number(document.body.dataset.updates ?? 0) + 1);
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
  const status = await P.apiStatus(P.EXECUTIONS_API_PATH, token);
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
      : status === 503
        ? P.atCapacityMessage(location.host)
        : "Cannot connect to agentty; retrying…",
  );
  setTimeout(connect, everConnected ? 1000 : 5000);
}

setInterval(render, 1000);
render();
connect();
if (token) {
  startServerList(token);
  startRecordingList(token);
}
