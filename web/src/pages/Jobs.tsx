import { useEffect, useState } from "preact/hooks";
import { can, get, isAllProfiles, request, servedProfiles } from "../api";
import { ago, when } from "../format";
import { Badge, Empty, ErrorBanner, Loading, TableWrap } from "../ui";

interface Job {
  name: string;
  schedule: string;
  kind: string;
  enabled: boolean;
  timezone: string | null;
  window?: boolean;
  nextDueAt: number | null;
}

interface Health {
  job: string;
  profile: string;
  lastOutcome: string;
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  lastErrorCode: string | null;
}

interface Run {
  id: number;
  job: string;
  profile: string;
  trigger: string;
  scheduledAt: string;
  outcome: string;
  exitCode: number | null;
  durationMs: number | null;
  errorCode: string | null;
  holders: { pid: number; kind: string }[];
  note: string | null;
}

interface JobsData {
  jobs: Job[];
  health: Health[];
  runs: Run[];
}

/** ok is good, refused/failed/unknown are what an operator must see, the rest is information. */
function outcomeKind(outcome: string): string {
  if (outcome === "ok") return "ok";
  if (outcome === "refused" || outcome === "failed" || outcome === "unknown") return "error";
  return "info";
}

export function JobsPage() {
  const [data, setData] = useState<JobsData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () => get<JobsData>("/api/jobs").then(setData, setError);
  useEffect(() => {
    void load();
  }, []);
  const profile = servedProfiles()[0] ?? "default";
  /** One action on a job: the page is busy with it, says what came of it, then reloads. */
  const act = async (job: string, action: () => Promise<string>) => {
    setBusy(job);
    setNote(null);
    try {
      setNote(await action());
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };
  const runNow = (job: string) =>
    act(job, async () => {
      const r = await request<{ outcome: string; note: string | null }>("POST", "/api/jobs/run", {
        job,
        profile,
      });
      return `${job} on ${profile}: ${r.outcome}${r.note ? ` (${r.note})` : ""}`;
    });
  // Pausing lives in config.json, which the scheduler reads: not in this page or the dashboard.
  const setPaused = (job: string, paused: boolean) =>
    act(job, async () => {
      await request("POST", "/api/jobs/pause", { job, paused });
      return `${job} ${paused ? "paused" : "resumed"}`;
    });
  return (
    <section aria-labelledby="jobs-title">
      <div class="page-head">
        <h1 id="jobs-title">Jobs</h1>
      </div>
      <ErrorBanner error={error} />
      {note ? (
        <div class="banner info" role="status">
          {note}
        </div>
      ) : null}
      {data === null ? (
        error ? null : (
          <Loading what="jobs" />
        )
      ) : data.jobs.length === 0 && data.runs.length === 0 ? (
        <Empty title="No scheduled jobs yet">
          <p>
            Add one with{" "}
            <code>hearth cron add nightly-backup --schedule "0 3 * * *" --kind backup</code>;{" "}
            <code>hearth start</code> runs the scheduler. Every run and its honest outcome shows
            here.
          </p>
        </Empty>
      ) : (
        <>
          <div class="card">
            <h2>Scheduled jobs</h2>
            <TableWrap label="Scheduled jobs">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Job</th>
                    <th scope="col">Schedule</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Last outcome</th>
                    <th scope="col">Last success</th>
                    <th scope="col">Next due</th>
                    {can("admin") ? (
                      <th scope="col">
                        <span class="sr-only">Actions</span>
                      </th>
                    ) : null}
                  </tr>
                </thead>
                <tbody>
                  {data.jobs.map((j) => {
                    const h = data.health.filter((x) => x.job === j.name);
                    return (
                      <tr key={j.name}>
                        <td>
                          {j.name} {j.enabled ? null : <Badge kind="info">paused</Badge>}
                        </td>
                        <td>
                          <code class="nowrap">{j.schedule}</code>
                          {j.timezone ? ` (${j.timezone})` : null}
                        </td>
                        <td>
                          {j.kind}
                          {j.window ? " (in a window)" : null}
                        </td>
                        <td>
                          {h.length === 0
                            ? "not run yet"
                            : h.map((x) => (
                                <span key={x.profile}>
                                  <Badge kind={outcomeKind(x.lastOutcome)}>{x.lastOutcome}</Badge>
                                  {x.consecutiveFailures > 1
                                    ? ` ${x.consecutiveFailures} in a row`
                                    : null}
                                </span>
                              ))}
                        </td>
                        <td>
                          {h.map((x) =>
                            x.lastSuccessAt ? when(Date.parse(x.lastSuccessAt)) : "never",
                          )}
                        </td>
                        <td class="next-due">
                          {j.nextDueAt !== null ? (
                            <time
                              dateTime={new Date(j.nextDueAt).toISOString()}
                              title={when(j.nextDueAt)}
                            >
                              {ago(j.nextDueAt)}
                            </time>
                          ) : (
                            "paused"
                          )}
                        </td>
                        {can("admin") ? (
                          <td>
                            <button
                              type="button"
                              disabled={busy !== null}
                              onClick={() => void runNow(j.name)}
                            >
                              {busy === j.name ? "Running…" : "Run now"}
                              <span class="sr-only">: {j.name}</span>
                            </button>{" "}
                            {isAllProfiles() ? (
                              <button
                                type="button"
                                disabled={busy !== null}
                                onClick={() => void setPaused(j.name, j.enabled)}
                              >
                                {j.enabled ? "Pause" : "Resume"}
                                <span class="sr-only">: {j.name}</span>
                              </button>
                            ) : null}
                          </td>
                        ) : null}
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableWrap>
          </div>
          <div class="card">
            <h2>Recent runs</h2>
            <TableWrap label="Recent runs">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Due</th>
                    <th scope="col">Job</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Exit</th>
                    <th scope="col">Took</th>
                    <th scope="col">Detail</th>
                  </tr>
                </thead>
                <tbody>
                  {data.runs.map((r) => (
                    <tr key={r.id}>
                      <td>{when(Date.parse(r.scheduledAt))}</td>
                      <td>
                        {r.job}
                        {r.trigger !== "schedule" ? ` (${r.trigger})` : null}
                      </td>
                      <td>
                        <Badge kind={outcomeKind(r.outcome)}>{r.outcome}</Badge>
                      </td>
                      <td>{r.exitCode ?? ""}</td>
                      <td>
                        {r.durationMs === null ? "" : `${(r.durationMs / 1000).toFixed(1)} s`}
                      </td>
                      <td>
                        {r.errorCode ? <code>{r.errorCode}</code> : null}
                        {r.holders.length > 0
                          ? ` held by ${r.holders.map((h) => `${h.kind} pid ${h.pid}`).join(", ")}`
                          : null}
                        {r.note ? ` ${r.note}` : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          </div>
        </>
      )}
    </section>
  );
}
