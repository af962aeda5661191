import { useEffect, useState } from "preact/hooks";
import { get, query } from "../api";
import { navigate } from "../router";
import { Empty, ErrorBanner, Loading, TableWrap } from "../ui";

interface LogEvent {
  level?: number | string;
  time?: number;
  msg?: string;
  event?: string;
}

interface Logs {
  level: string;
  sources: {
    profile: string;
    process: string;
    pid: number;
    available: boolean;
    events: LogEvent[];
  }[];
}

/** Recent warn/error events of each running process (GET /api/logs), filterable by level and text. */
export function LogsPage({ search }: { search: URLSearchParams }) {
  const level = search.get("level") === "error" ? "error" : "warn";
  const [text, setText] = useState("");
  const [data, setData] = useState<Logs | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setData(null);
    get<Logs>(`/api/logs${query({ level })}`).then(setData, setError);
  }, [level]);
  const rows =
    data?.sources.flatMap((s) =>
      s.events.map((e) => ({ ...e, profile: s.profile, process: s.process })),
    ) ?? [];
  const shown = rows.filter((r) =>
    `${r.event ?? ""} ${r.msg ?? ""}`.toLowerCase().includes(text.toLowerCase()),
  );
  const missing = data?.sources.filter((s) => !s.available) ?? [];
  return (
    <section aria-labelledby="logs-title">
      <div class="page-head">
        <h1 id="logs-title">Logs</h1>
      </div>
      <div class="filters">
        <label>
          Level{" "}
          <select
            value={level}
            onChange={(e) => navigate(`/logs?level=${(e.target as HTMLSelectElement).value}`)}
          >
            <option value="warn">Warnings and errors</option>
            <option value="error">Errors</option>
          </select>
        </label>{" "}
        <label>
          Filter{" "}
          <input
            type="search"
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {missing.length > 0 ? (
        <p class="muted" role="status">
          Not reported yet by: {missing.map((s) => `${s.process} of ${s.profile}`).join(", ")}{" "}
          (their recent events come with a later hearth).
        </p>
      ) : null}
      {data === null ? (
        error ? null : (
          <Loading what="events" />
        )
      ) : shown.length === 0 ? (
        <Empty title="No events">
          <p>
            {data.sources.length === 0
              ? "No gateway is running."
              : "Nothing at this level from the running processes."}
          </p>
        </Empty>
      ) : (
        <TableWrap label="Events">
          <table class="dense logs">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Process</th>
                <th scope="col">Level</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r, i) => (
                <tr key={`${r.profile}-${r.time ?? 0}-${i}`}>
                  <td>{r.time ? new Date(r.time).toLocaleString() : ""}</td>
                  <td>
                    {r.process} · {r.profile}
                  </td>
                  <td>{String(r.level ?? "")}</td>
                  <td>
                    {r.event ? <code>{r.event}</code> : null} {r.msg ?? ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
