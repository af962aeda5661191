/** A long-lived hearth process `hearth start` supervises. */
export interface ChildSpec {
  name: string;
  /** CLI arguments after `--home <home>`. */
  args: string[];
  /** The `event` of the JSON line it prints on stdout once it serves. */
  readyEvent: string;
  /** One line of the human summary, from its readiness line. */
  describe(ready: Record<string, unknown>): string;
}

/** What `hearth start` runs, in start order. Adding a process is one entry. */
export function productChildren(profiles: string[]): ChildSpec[] {
  const p = profiles.length > 0 ? ["--profiles", profiles.join(",")] : [];
  return [
    {
      name: "gateway",
      args: ["gateway", "run", ...p],
      readyEvent: "gateway.ready",
      describe: (e) => `gateway    ${String(e.address)}  (pid ${String(e.pid)})`,
    },
    {
      name: "scheduler",
      args: ["scheduler", "run", ...p],
      readyEvent: "scheduler.ready",
      describe: (e) =>
        `scheduler  ${String(e.address)}/status  (pid ${String(e.pid)}, ${String(e.jobs)} job(s))`,
    },
    {
      name: "dashboard",
      args: ["dashboard", "run", ...p],
      readyEvent: "dashboard.ready",
      describe: (e) =>
        `dashboard  ${String(e.login)}  (pid ${String(e.pid)}; open the link to log in)`,
    },
  ];
}
