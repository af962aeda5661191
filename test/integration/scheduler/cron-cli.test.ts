import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { startGateway, writeConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";

describe("hearth cron", () => {
  it("adds, lists, pauses, resumes and removes jobs in config.json, validated", async () => {
    const home = tempHome();
    writeConfig(home, { gateway: { port: 0 } });
    const added = await runCli(
      [
        "--json",
        "cron",
        "add",
        "nightly",
        "--schedule",
        "0 3 * * *",
        "--kind",
        "backup",
        "--timezone",
        "Europe/Berlin",
      ],
      { home },
    );
    expect(added.code).toBe(0);
    expect(added.json().added).toMatchObject({
      name: "nightly",
      kind: "backup",
      enabled: true,
      timezone: "Europe/Berlin",
    });
    const file = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    expect(file.gateway).toEqual({ port: 0 }); // the rest of the file is kept
    expect(file.scheduler.jobs).toHaveLength(1);

    const dup = await runCli(
      ["--json", "cron", "add", "nightly", "--schedule", "0 3 * * *", "--kind", "backup"],
      { home },
    );
    expect(dup.code).toBe(1);
    expect(JSON.parse(dup.stderr).error.code).toBe("HEARTH_JOB_EXISTS");
    const invalid = await runCli(
      ["--json", "cron", "add", "bad", "--schedule", "61 * * * *", "--kind", "backup"],
      { home },
    );
    expect(JSON.parse(invalid.stderr).error.code).toBe("HEARTH_CONFIG_INVALID");
    expect(readFileSync(join(home, "config.json"), "utf8")).not.toContain('"bad"'); // nothing written

    expect((await runCli(["cron", "pause", "nightly"], { home })).code).toBe(0);
    let list = (await runCli(["--json", "cron", "list"], { home })).json();
    expect(list.jobs[0]).toMatchObject({
      name: "nightly",
      enabled: false,
      nextDue: null,
      last: null,
    });
    expect((await runCli(["cron", "resume", "nightly"], { home })).code).toBe(0);
    list = (await runCli(["--json", "cron", "list"], { home })).json();
    expect(list.jobs[0].enabled).toBe(true);
    expect(Date.parse(list.jobs[0].nextDue)).toBeGreaterThan(Date.now());

    const missing = await runCli(["--json", "cron", "remove", "nope"], { home });
    expect(JSON.parse(missing.stderr).error.code).toBe("HEARTH_JOB_NOT_FOUND");
    expect((await runCli(["--json", "cron", "remove", "nightly"], { home })).json()).toEqual({
      removed: "nightly",
    });
    expect((await runCli(["--json", "cron", "list"], { home })).json().jobs).toEqual([]);
  });

  it("run-now records the run; a refusal exits 3 naming the holder and shows in cron runs", async () => {
    const home = tempHome();
    writeConfig(home, {
      scheduler: {
        jobs: [
          { name: "opt", schedule: "0 4 * * *", kind: "optimize", window: false },
          { name: "reap", schedule: "0 4 * * *", kind: "reap-idle" },
        ],
      },
    });
    const ok = await runCli(["--json", "cron", "run-now", "reap"], { home });
    expect(ok.code).toBe(0);
    expect(ok.json()).toMatchObject({ job: "reap", outcome: "ok", exitCode: 0 });

    const gateway = await startGateway(home);
    const refused = await runCli(["--json", "cron", "run-now", "opt"], { home });
    expect(refused.code).toBe(3);
    expect(refused.json()).toMatchObject({
      outcome: "refused",
      exitCode: 3,
      errorCode: "HEARTH_STORE_HELD",
    });
    expect(refused.json().holders.map((h: { pid: number }) => h.pid)).toContain(gateway.pid);

    const runs = (await runCli(["--json", "cron", "runs"], { home })).json().runs;
    expect(
      runs.map((r: { job: string; outcome: string; trigger: string }) => [
        r.job,
        r.outcome,
        r.trigger,
      ]),
    ).toEqual([
      ["opt", "refused", "manual"],
      ["reap", "ok", "manual"],
    ]);
    const text = await runCli(["cron", "runs", "opt"], { home });
    expect(text.stdout).toContain(`held by pid ${gateway.pid} (gateway)`);
    await gateway.process.stop();
  });
});
