import { useCallback, useEffect, useState } from "preact/hooks";
import { can, get, request } from "../api";
import { type Day, MessagesChart, type Sample, SizeChart } from "../chart";
import { ago, bytes, when } from "../format";
import { Badge, ErrorBanner, Loading, TableWrap } from "../ui";

interface Finding {
  code: string;
  severity: "ok" | "info" | "warning" | "error";
  message: string;
  fix?: string;
}

interface ProfileHealth {
  profile: string;
  files: { database: number; wal: number; shm: number };
  freeBytes: number | null;
  holders: {
    pid: number;
    kind: string;
    roles: string[];
    since: string | null;
    commandLine: string | null;
    self: boolean;
  }[];
  ghosts: { pid: number; since: string | null; commandLine: string | null }[];
  unexplainedLocks: number;
  backups: { name: string; bytes: number; at: number }[];
  backupRunning: boolean;
  doctor: {
    startedAt: number;
    finishedAt: number | null;
    report: { status: string; findings: Finding[] } | null;
    error: { code: string; message: string } | null;
    /** Since the shown run finished; a new run starts when it is older than dashboard.doctorFreshMs. */
    ageMs: number | null;
    running: boolean;
  } | null;
}

const ORDER = { error: 0, warning: 1, info: 2, ok: 3 } as const;

interface History {
  profile: string;
  samples: Sample[];
  days: Day[];
}

export function HealthPage() {
  const [data, setData] = useState<ProfileHealth[] | null>(null);
  const [history, setHistory] = useState<Map<string, History>>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [r, h] = await Promise.all([
        get<{ profiles: ProfileHealth[] }>("/api/health"),
        get<{ profiles: History[] }>("/api/health/history?days=30"),
      ]);
      setData(r.profiles);
      setHistory(new Map(h.profiles.map((p) => [p.profile, p])));
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, []);

  useEffect(() => {
    void load();
    const t = window.setInterval(() => void load(), 5000);
    return () => window.clearInterval(t);
  }, [load]);

  const act = async (what: "doctor" | "backup", profile: string) => {
    setBusy(`${what}:${profile}`);
    setNote(null);
    try {
      const r = await request<{ backup?: { name: string; bytes: number } }>(
        "POST",
        `/api/${what}`,
        { profile },
      );
      if (r.backup)
        setNote(`Backup ${r.backup.name} written (${bytes(r.backup.bytes)}, verified).`);
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section aria-labelledby="health-title">
      <div class="page-head">
        <h1 id="health-title">Health</h1>
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {note ? (
        <div class="banner ok" role="status">
          {note}
        </div>
      ) : null}
      {data === null ? (
        <Loading what="health" />
      ) : (
        data.map((p) => (
          <article class="card" key={p.profile} aria-labelledby={`health-${p.profile}`}>
            <h2 id={`health-${p.profile}`}>Profile {p.profile}</h2>
            <div class="stats">
              <Stat label="Database" value={bytes(p.files.database)} />
              <Stat label="WAL" value={bytes(p.files.wal)} />
              <Stat label="Free space" value={bytes(p.freeBytes)} />
              <Stat label="Newest backup" value={p.backups[0] ? ago(p.backups[0].at) : "none"} />
            </div>

            <div class="section-head">
              <h3>Over the last 30 days</h3>
            </div>
            <div class="charts">
              <SizeChart samples={history.get(p.profile)?.samples ?? []} />
              <MessagesChart days={history.get(p.profile)?.days ?? []} />
            </div>

            <div class="section-head">
              <h3>Doctor</h3>
              {can("admin") ? (
                <button
                  type="button"
                  disabled={busy !== null}
                  onClick={() => void act("doctor", p.profile)}
                >
                  {busy === `doctor:${p.profile}` ? "Running…" : "Run doctor"}
                </button>
              ) : null}
            </div>
            <Doctor run={p.doctor} />

            <div class="section-head">
              <h3>Who holds the store</h3>
            </div>
            {p.holders.length === 0 ? (
              <p class="muted">No process holds it.</p>
            ) : (
              <TableWrap label="Holders">
                <table class="holders">
                  <thead>
                    <tr>
                      <th scope="col">PID</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Role</th>
                      <th scope="col">Since</th>
                      <th scope="col">Command</th>
                    </tr>
                  </thead>
                  <tbody>
                    {p.holders.map((h) => (
                      <tr key={h.pid}>
                        <td data-label="PID">{h.pid}</td>
                        <td data-label="Kind">
                          {h.kind}
                          {h.self ? " (this dashboard)" : ""}
                        </td>
                        <td data-label="Role">{h.roles.join(", ") || "-"}</td>
                        <td data-label="Since">{h.since ? ago(Date.parse(h.since)) : "unknown"}</td>
                        <td data-label="Command">
                          <code>{h.commandLine ?? "(unreadable)"}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
            {p.ghosts.map((g) => (
              <div class="banner warning" key={g.pid} role="status">
                pid {g.pid} still holds a deleted generation of the store ({g.commandLine ?? "?"})
              </div>
            ))}
            {p.unexplainedLocks > 0 ? (
              <p class="muted">
                {p.unexplainedLocks} lock(s) belong to a process hearth cannot name.
              </p>
            ) : null}

            <div class="section-head">
              <h3>Backups</h3>
              {can("admin") ? (
                <button
                  type="button"
                  disabled={busy !== null || p.backupRunning}
                  onClick={() => void act("backup", p.profile)}
                >
                  {busy === `backup:${p.profile}` || p.backupRunning
                    ? "Backing up…"
                    : "Back up now"}
                </button>
              ) : null}
            </div>
            {p.backups.length === 0 ? (
              <p class="muted">No backups yet.</p>
            ) : (
              <ul class="plain">
                {p.backups.map((b) => (
                  <li key={b.name}>
                    <code>{b.name}</code> · {bytes(b.bytes)} · {ago(b.at)}
                  </li>
                ))}
              </ul>
            )}
          </article>
        ))
      )}
    </section>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
    </div>
  );
}

/** How old a doctor run is, in words ("checked 3 minutes ago"). */
function age(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min` : `${Math.round(m / 60)} h`;
}

function Doctor({ run }: { run: ProfileHealth["doctor"] }) {
  if (!run || (run.finishedAt === null && !run.report))
    return <p class="muted">Doctor is running…</p>;
  const checked = (
    <p class="muted doctor-age" data-age-ms={run.ageMs ?? undefined}>
      Checked {run.ageMs !== null ? `${age(run.ageMs)} ago` : ""}
      {run.finishedAt ? ` (${when(run.finishedAt)})` : ""}
      {run.running ? " · checking again…" : ""}
    </p>
  );
  if (run.error)
    return (
      <div>
        {checked}
        <ErrorBanner error={Object.assign(new Error(run.error.message), run.error)} />
      </div>
    );
  const findings = [...(run.report?.findings ?? [])].sort(
    (a, b) => ORDER[a.severity] - ORDER[b.severity],
  );
  const problems = findings.filter((f) => f.severity !== "ok");
  return (
    <div>
      {checked}
      <p class="muted">
        Status <Badge kind={run.report?.status ?? "ok"}>{run.report?.status}</Badge> ·{" "}
        {findings.length - problems.length} checks passed
      </p>
      <ul class="findings" aria-label="Doctor findings">
        {problems.map((f, i) => (
          <li key={`${f.code}-${i}`} class={`finding ${f.severity}`} data-code={f.code}>
            <Badge kind={f.severity}>{f.severity}</Badge> <strong>{f.code}</strong> {f.message}
            {f.fix ? (
              <div class="fix">
                Fix: <code>{f.fix}</code>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      <details>
        <summary>All {findings.length} checks</summary>
        <ul class="findings">
          {findings
            .filter((f) => f.severity === "ok")
            .map((f, i) => (
              <li key={`${f.code}-ok-${i}`} class="finding ok">
                <Badge kind="ok">ok</Badge> <strong>{f.code}</strong> {f.message}
              </li>
            ))}
        </ul>
      </details>
    </div>
  );
}
