import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { ago } from "../format";
import { Badge, ErrorBanner, Loading, TableWrap } from "../ui";
import { SupervisorCard, type SupervisorView } from "./Supervisor";

interface Proc {
  pid: number;
  since: string;
  up: boolean;
  draining?: boolean;
  ready?: boolean | null;
  inFlight?: number | null;
  events?: { level?: number | string; msg?: string; time?: number }[] | null;
}

interface Run {
  id: number;
  job: string;
  trigger: string;
  scheduledAt: string;
  finishedAt: string | null;
  outcome: string;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  errorCode: string | null;
  workerPid: number | null;
}

interface Services {
  profiles: { profile: string; gateway: Proc | null; scheduler: Proc | null; runs: Run[] }[];
  supervisor: SupervisorView;
}

const OUTCOME: Record<string, string> = { ok: "ok", running: "info", refused: "warning" };

/** The scheduler's workers, as their runs are recorded: newest first. */
function WorkerRuns({ runs, profile }: { runs: Run[]; profile: string }) {
  if (runs.length === 0) return <p class="muted">No job runs recorded yet.</p>;
  return (
    <TableWrap label={`Recent worker runs of ${profile}`}>
      <table class="worker-runs dense" aria-label={`Recent worker runs of ${profile}`}>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Outcome</th>
            <th scope="col">Worker</th>
            <th scope="col">Exit</th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                {r.job}
                {r.trigger === "scheduled" ? "" : ` (${r.trigger})`}
              </td>
              <td>
                <Badge kind={OUTCOME[r.outcome] ?? "error"}>{r.outcome}</Badge>
                {r.errorCode ? ` ${r.errorCode}` : ""}
              </td>
              <td>{r.workerPid ?? ""}</td>
              <td>{r.signal ?? r.exitCode ?? ""}</td>
              <td class="num">
                {r.durationMs === null ? "" : `${(r.durationMs / 1000).toFixed(1)} s`}
              </td>
              <td>{ago(Date.parse(r.scheduledAt))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function state(p: Proc | null): [string, string] {
  if (!p) return ["never started", "info"];
  if (!p.up) return ["down", "error"];
  if (p.draining) return ["draining", "warning"];
  if (p.ready === false) return ["up, not ready", "warning"];
  return ["up", "ok"];
}

/** Gateway and scheduler of each profile, as their own records and endpoints say (GET /api/services, every 5 s). */
export function ServicesPage() {
  const [data, setData] = useState<Services | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const load = () => get<Services>("/api/services").then(setData, setError);
    void load();
    const t = window.setInterval(() => void load(), 5000);
    return () => window.clearInterval(t);
  }, []);
  return (
    <section aria-labelledby="services-title">
      <div class="page-head">
        <h1 id="services-title">Services</h1>
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {data === null ? (
        error ? null : (
          <Loading what="services" />
        )
      ) : (
        <>
          <SupervisorCard view={data.supervisor} />
          {data.profiles.map((p) => (
            <article class="card" key={p.profile} aria-labelledby={`services-${p.profile}`}>
              <h2 id={`services-${p.profile}`}>Profile {p.profile}</h2>
              <TableWrap label={`Processes of ${p.profile}`}>
                <table class="services dense">
                  <thead>
                    <tr>
                      <th scope="col">Process</th>
                      <th scope="col">State</th>
                      <th scope="col">PID</th>
                      <th scope="col">Started</th>
                      <th scope="col">In-flight turns</th>
                      <th scope="col">Recent warnings and errors</th>
                    </tr>
                  </thead>
                  <tbody>
                    {(["gateway", "scheduler"] as const).map((kind) => {
                      const proc = p[kind];
                      const [label, badge] = state(proc);
                      return (
                        <tr key={kind} data-kind={kind}>
                          <td>{kind}</td>
                          <td>
                            <Badge kind={badge}>{label}</Badge>
                          </td>
                          <td>{proc?.pid ?? ""}</td>
                          <td>{proc ? ago(Date.parse(proc.since)) : ""}</td>
                          <td>{proc?.inFlight ?? (kind === "gateway" && proc?.up ? "?" : "")}</td>
                          <td>
                            {!proc?.up
                              ? ""
                              : proc.events === null || proc.events === undefined
                                ? "not reported by this process yet"
                                : proc.events.length === 0
                                  ? "none"
                                  : proc.events
                                      .slice(-3)
                                      .map((e) => e.msg ?? "")
                                      .join(" · ")}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </TableWrap>
              <h3>Recent worker runs</h3>
              <WorkerRuns runs={p.runs ?? []} profile={p.profile} />
            </article>
          ))}
        </>
      )}
    </section>
  );
}
