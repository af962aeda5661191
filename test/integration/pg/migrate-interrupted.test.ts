/**
 * A database an interrupted `hearth migrate --to` left half-filled: doctor
 * reports it (pg.migrate-interrupted, exit 4), and a writer refuses it with
 * HEARTH_MIGRATION_INCOMPLETE instead of a raw duplicate-key error; once the
 * copy is resumed and verified, both are gone.
 */
import { describe, expect, it } from "vitest";
import { isHearthError, openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { cliEnv, pgHome } from "./helpers.js";

describe.skipIf(!pgEnabled)("an interrupted copy into PostgreSQL", () => {
  it("is a doctor finding, and writers refuse it with a coded error until the copy resumes", async () => {
    const home = tempHome();
    const source = await openStore({ home, env: {} });
    const s = await source.sessions.create({ title: "bulk" });
    for (let i = 0; i < 4; i++)
      await source.messages.appendBatch(
        s.id,
        Array.from({ length: 50 }, (_, j) => ({
          role: "user" as const,
          content: `bulk ${i} ${j}`,
        })),
      );
    await source.close();
    const url = await freshPgDatabase();
    const killed = await runCli(["migrate", "--to", url, "--chunk-rows", "20"], {
      home,
      env: { HEARTH_FAILPOINTS: "migrate-to.mid-copy=kill@5" },
    });
    expect(killed.signal).toBe("SIGKILL");

    const pgSide = pgHome(url);
    const doctor = await runCli(["--json", "doctor"], { home: pgSide, env: cliEnv });
    expect(doctor.code).toBe(4);
    const finding = doctor
      .json()
      .findings.find((f: { code: string }) => f.code === "pg.migrate-interrupted");
    expect(finding).toMatchObject({ severity: "error" });
    expect(finding.fix).toContain("hearth migrate --to");

    const refused = await openStore({ home: pgSide }).then(
      async (store) => {
        // Without the refusal this write collides with a copied row.
        await store.messages.append(s.id, { role: "user", content: "too early" });
        await store.close();
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(isHearthError(refused, "HEARTH_MIGRATION_INCOMPLETE")).toBe(true);
    // A CLI write says the same, coded.
    const cliWrite = await runCli(["--json", "token", "create"], {
      home: pgSide,
      env: cliEnv,
    });
    expect(cliWrite.code).not.toBe(0);
    expect(JSON.parse(cliWrite.stderr).error.code).toBe("HEARTH_MIGRATION_INCOMPLETE");

    const resumed = await runCli(["--json", "migrate", "--to", url, "--chunk-rows", "20"], {
      home,
      env: cliEnv,
    });
    expect(resumed.code).toBe(0);
    const after = await runCli(["--json", "doctor"], { home: pgSide, env: cliEnv });
    const codes = after.json().findings.map((f: { code: string }) => f.code);
    expect(codes).not.toContain("pg.migrate-interrupted");
    const store = await openStore({ home: pgSide });
    await store.messages.append(s.id, { role: "user", content: "after the copy" });
    await store.close();
  });
});
