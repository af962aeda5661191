import { ago, bytes } from "../format";
import { Badge, TableWrap } from "../ui";

export interface Child {
  name: string;
  state: string;
  pid: number | null;
  startedAt: string | null;
  uptimeMs: number | null;
  restarts: number;
  crashes: number;
  rssBytes: number | null;
  ready: string | null;
  lastExit: { code: number | null; signal: string | null; at: string } | null;
  lastError: { time: number; level: number; msg: string } | null;
}

export type SupervisorView =
  | { supervised: false; reason: string }
  | {
      supervised: true;
      pid: number;
      startedAt: string | null;
      children: Child[];
      events: { time: number; level: number; msg: string; child: string | null }[];
    };

/** "3 h 12 min", "45 s": how long a process has served. */
export function uptime(ms: number | null): string {
  if (ms === null) return "";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function chip(c: Child): [string, string] {
  if (c.state === "running")
    return c.ready === "ready" ? ["running", "ok"] : ["not ready", "warning"];
  if (c.state === "starting") return ["starting", "info"];
  if (c.state === "backoff") return ["restarting (backoff)", "warning"];
  return [c.state, "error"];
}

function exitText(e: Child["lastExit"]): string {
  if (!e) return "none";
  return `${e.signal ?? `code ${e.code}`} ${ago(Date.parse(e.at))}`;
}

/** The supervisor's children (GET /api/services → supervisor): restarts, uptime, memory, last exit and error. */
export function SupervisorCard({ view }: { view: SupervisorView }) {
  if (!view.supervised)
    return (
      <article class="card supervisor" aria-labelledby="supervisor-title">
        <h2 id="supervisor-title">Supervisor</h2>
        <p class="not-supervised">
          <Badge kind="info">not supervised</Badge> {view.reason} for this home: restarts and uptime
          are counted by <code>hearth start</code>.
        </p>
      </article>
    );
  return (
    <article class="card supervisor" aria-labelledby="supervisor-title">
      <h2 id="supervisor-title">
        Supervisor <span class="muted">hearth start, pid {view.pid}</span>
      </h2>
      <TableWrap label="Supervised processes">
        <table class="children dense">
          <thead>
            <tr>
              <th scope="col">Process</th>
              <th scope="col">State</th>
              <th scope="col">PID</th>
              <th scope="col">Uptime</th>
              <th scope="col" class="num">
                Restarts
              </th>
              <th scope="col" class="num">
                Memory
              </th>
              <th scope="col">Last exit</th>
              <th scope="col">Last warning or error</th>
            </tr>
          </thead>
          <tbody>
            {view.children.map((c) => {
              const [label, kind] = chip(c);
              return (
                <tr key={c.name} data-child={c.name}>
                  <td>{c.name}</td>
                  <td>
                    <Badge kind={kind}>{label}</Badge>
                  </td>
                  <td>{c.pid ?? ""}</td>
                  <td class="uptime">{uptime(c.uptimeMs)}</td>
                  <td class="num restarts">{c.restarts}</td>
                  <td class="num">{c.rssBytes === null ? "" : bytes(c.rssBytes)}</td>
                  <td class="last-exit">{exitText(c.lastExit)}</td>
                  <td class="last-error">
                    {c.lastError ? `${c.lastError.msg} (${ago(c.lastError.time)})` : "none"}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableWrap>
      {view.events.length > 0 ? (
        <details class="supervisor-events">
          <summary>Supervisor events ({view.events.length})</summary>
          <ul>
            {view.events
              .slice()
              .reverse()
              .map((e, i) => (
                <li key={`${e.time}-${i}`}>
                  <time dateTime={new Date(e.time).toISOString()}>{ago(e.time)}</time> {e.msg}
                </li>
              ))}
          </ul>
        </details>
      ) : null}
    </article>
  );
}
