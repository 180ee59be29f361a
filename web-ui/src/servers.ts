// "Agentty servers on this machine": every agentty server of this user (each
// MCP client starts its own, with its own dashboard), polled from this
// server's SERVERS_API_PATH with the secret in a header, so a person on any
// dashboard can reach the executions of every agent.
import * as P from "./protocol";

const POLL_MS = 2000;

const byId = (id: string) => document.getElementById(id) as HTMLElement;

let lastView = "";

function kindText(kind: string): string {
  if (kind === "mcp") return "mcp (an agent's server)";
  if (kind === "serve") return "serve (dashboard only)";
  return kind;
}

function render(servers: P.ServerEntry[]): void {
  const body = byId("servers-body") as HTMLTableSectionElement;
  body.replaceChildren();
  for (const s of servers) {
    const row = body.insertRow();
    row.dataset.pid = String(s.pid);
    row.dataset.kind = s.kind;
    if (s.self) row.classList.add("self");
    row.insertCell().textContent = kindText(s.kind);
    row.insertCell().textContent = String(s.pid);
    row.insertCell().textContent = new Date(s.started_at).toLocaleString();
    const link = row.insertCell();
    if (s.self) {
      link.textContent = "this dashboard";
    } else {
      const a = document.createElement("a");
      a.href = s.dashboard_url;
      a.textContent = `open dashboard (port ${s.port})`;
      a.className = "server-link";
      link.append(a);
    }
  }
  const others = servers.filter((s) => !s.self).length;
  showMessage(others === 0 ? "No other agentty server is running for this user." : "");
}

function showMessage(text: string): void {
  const element = byId("servers-message");
  element.textContent = text;
  element.hidden = text === "";
}

async function poll(token: string): Promise<void> {
  try {
    const list = await P.getJson<{ servers: P.ServerEntry[] }>(P.SERVERS_API_PATH, token);
    const view = JSON.stringify(list.servers);
    if (view !== lastView) {
      lastView = view;
      render(list.servers);
    }
    document.body.dataset.serversPolled = String(Number(document.body.dataset.serversPolled ?? 0) + 1);
  } catch {
    lastView = "";
    byId("servers-body").replaceChildren();
    showMessage("Cannot list the servers (this server is not reachable).");
  }
}

export function startServerList(token: string): void {
  void poll(token);
  setInterval(() => void poll(token), POLL_MS);
}
