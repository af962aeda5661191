/**
 * The README's first PostgreSQL command on a new, empty database:
 * `hearth sessions list` creates hearth's schema there (the configuration
 * names that database as the store) and lists nothing.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { cliEnv, pgHome } from "./helpers.js";

describe.skipIf(!pgEnabled)("the first command on an empty PostgreSQL database", () => {
  it("hearth sessions list creates the schema and lists no sessions", async () => {
    const home = pgHome(await freshPgDatabase());
    const listed = await runCli(["--json", "sessions", "list"], { home, env: cliEnv });
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(listed.json().items).toEqual([]);
    const doctor = await runCli(["--json", "doctor"], { home, env: cliEnv });
    const schema = doctor.json().findings.find((f: { code: string }) => f.code === "pg.schema");
    expect(schema.severity).toBe("ok");
  });
});
