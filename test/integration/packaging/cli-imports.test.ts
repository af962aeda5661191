import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { CLI } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { runRecordingPackages } from "../../helpers/loaded.js";
import { run } from "../../helpers/process.js";

const THREADS_PROBE = join(import.meta.dirname, "../../fixtures/record-worker-threads.cjs");

/** `hearth --home <home> <args>` with every package it loads recorded. */
function loadedBy(home: string, args: string[]) {
  // A user's shell: none of the HEARTH_* settings vitest.config.ts gives every
  // test (with HEARTH_GATEWAY_PORT set, doctor loads croner whatever the store holds).
  const unset = Object.keys(process.env).filter((k) => k.startsWith("HEARTH_"));
  return runRecordingPackages(
    [CLI, "--home", home, ...args],
    Object.fromEntries(unset.map((k) => [k, undefined])),
  );
}

async function smallStore(): Promise<string> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create({ title: "one" });
  await store.messages.append(s.id, { role: "user", content: "hello" });
  await store.close();
  return home;
}

// Start-up is most of a small command's time (docs/benchmarks.md, workload
// 12): a command loads only what it uses.
describe("what a CLI command loads", () => {
  it("doctor on a store without scheduled runs loads neither the lock addon nor the cron engine", async () => {
    const home = await smallStore();
    const doctor = await loadedBy(home, ["doctor"]);
    expect(doctor.stdout).toContain("quick_check: ok");
    expect(doctor.packages).toContain("better-sqlite3"); // the recording sees what it claims to
    for (const heavy of ["fs-native-extensions", "croner", "fastify", "prom-client", "zod"])
      expect(doctor.packages).not.toContain(heavy);
    const help = await loadedBy(home, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: hearth");
    // commander is in the bundle (scripts/bundle-cli.mjs): nothing from node_modules.
    expect(help.packages).toEqual([]);
  });

  it("sessions list loads the lock addon straight from its prebuild, not through its resolver", async () => {
    const home = await smallStore();
    const list = await loadedBy(home, ["sessions", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("1 msgs");
    expect(list.packages).toContain("fs-native-extensions");
    for (const resolver of ["require-addon", "bare-addon-resolve", "bare-module-resolve"])
      expect(list.packages).not.toContain(resolver);
  });

  it("sessions list, doctor, ps and --help load none of node:crypto, node:readline, node:perf_hooks, node:child_process (each costs milliseconds at start)", async () => {
    const home = await smallStore();
    // The recording sees a load when there is one.
    const probe = await runRecordingPackages(["-e", "require('node:child_process')"]);
    expect(probe.builtins).toContain("child_process");
    for (const args of [["sessions", "list"], ["doctor"], ["ps"], ["--help"]]) {
      const run = await loadedBy(home, args);
      expect(run.stdout).not.toBe("");
      expect(run.builtins).toContain("fs");
      // child_process (net and stream's helpers with it, where stdout is
      // not a pipe): commander's, for the spawn of an executable
      // subcommand, which hearth never asks for.
      for (const lazy of ["crypto", "readline", "readline/promises", "perf_hooks", "child_process"])
        expect(run.builtins, args.join(" ")).not.toContain(lazy);
    }
  });

  it("sessions list, doctor and --help load no node:worker_threads (reader and checkpoint threads start at first use)", async () => {
    const home = await smallStore();
    const unset = Object.keys(process.env).filter((k) => k.startsWith("HEARTH_"));
    let probed = 0;
    const probe = async (args: string[]) => {
      probed += 1;
      const file = join(home, "..", `threads-${probed}.txt`);
      writeFileSync(file, "");
      const result = await run(process.execPath, ["--require", THREADS_PROBE, ...args], {
        env: { ...Object.fromEntries(unset.map((k) => [k, undefined])), HEARTH_TEST_LOADED: file },
      });
      return { result, loaded: readFileSync(file, "utf8").trim() };
    };
    // The probe sees a load when there is one.
    expect((await probe(["-e", "require('node:worker_threads')"])).loaded).toBe(
      "worker_threads: yes",
    );
    for (const args of [["sessions", "list"], ["doctor"], ["--help"]]) {
      const { result, loaded } = await probe([CLI, "--home", home, ...args]);
      expect(result.stdout, args.join(" ")).not.toBe("");
      expect(loaded, args.join(" ")).toBe("worker_threads: no");
    }
  });

  it("doctor still counts a job's missed due times, loading the cron engine only then", async () => {
    const home = await smallStore();
    writeFileSync(
      join(home, "config.json"),
      `${JSON.stringify({ scheduler: { jobs: [{ name: "minutely", schedule: "* * * * *", kind: "prune" }] } })}\n`,
    );
    // A success an hour ago and nothing since: about 60 due times missed.
    const db = new Database(join(home, "state.db"));
    const hourAgo = Date.now() - 3_600_000;
    db.prepare(
      "INSERT INTO job_runs (job, profile, trigger, scheduled_at, started_at, finished_at, outcome) VALUES ('minutely', 'default', 'schedule', ?, ?, ?, 'ok')",
    ).run(hourAgo, hourAgo, hourAgo);
    db.close();
    const doctor = await loadedBy(home, ["--json", "doctor"]);
    const stale = doctor.json().findings.find((f: { code: string }) => f.code === "job_stale");
    expect(stale).toMatchObject({ severity: "warning" });
    expect(stale.message).toMatch(/minutely last succeeded .*, (59|60|61) due times ago/);
    expect(doctor.packages).toContain("croner");
    expect(doctor.code).toBe(4);
  });
});
