/**
 * The store password is never shown (doctor, ps, the gateway's readiness
 * line, a login refusal), whatever form the URL gives it in, and need never
 * be on a command line: PGPASSWORD and store.passwordFile (this user's,
 * 0600, else HEARTH_PASSWORD_FILE_UNSAFE) supply it.
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HearthError, openStore } from "../../../src/index.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { startGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { freshPgDatabase, pgEnabled } from "../../helpers/pg.js";
import { cliEnv } from "./helpers.js";

const SECRET = `Pw-${randomBytes(6).toString("hex")}`;
const ROLE = `hearth_sec_${randomBytes(4).toString("hex")}`;
let base = ""; // the database's URL as the role, without a password
const granted: string[] = []; // more databases the role may write to
const scriptTool = ["/usr/bin/script", "/bin/script"].find((p) => existsSync(p));

async function asAdmin(url: string, sql: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const s of sql) await c.query(s);
  } finally {
    await c.end();
  }
}

function homeWith(store: Record<string, unknown>): string {
  const home = tempHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), JSON.stringify({ store }), { mode: 0o600 });
  return home;
}

const withQueryPassword = (pw: string) => `${base}?sslmode=disable&password=${pw}`;

describe.skipIf(!pgEnabled)("the store password on PostgreSQL", () => {
  let admin = "";
  beforeAll(async () => {
    admin = await freshPgDatabase();
    const db = new URL(admin).pathname.slice(1);
    await asAdmin(admin, [
      `CREATE ROLE ${ROLE} LOGIN PASSWORD '${SECRET}'`,
      `GRANT ALL ON DATABASE ${db} TO ${ROLE}`,
      `GRANT ALL ON SCHEMA public TO ${ROLE}`,
    ]);
    const u = new URL(admin);
    u.username = ROLE;
    u.password = "";
    base = u.toString();
    const home = tempHome();
    (await openStore({ home, env: {} })).close();
    const copied = await runCli(["migrate", "--to", base], {
      home,
      env: { ...cliEnv, PGPASSWORD: SECRET },
    });
    expect(copied.stderr).not.toContain("warning");
    expect(copied.code).toBe(0);
  });
  afterAll(async () => {
    if (!admin) return;
    for (const db of granted) await asAdmin(db, [`DROP OWNED BY ${ROLE}`]);
    await asAdmin(admin, [`DROP OWNED BY ${ROLE}`]);
    await asAdmin(admin, [`DROP ROLE ${ROLE}`]).catch(() => {});
  });

  it("doctor and ps never print a password= parameter, in text or JSON", async () => {
    const home = homeWith({ url: withQueryPassword(SECRET) });
    for (const args of [["doctor"], ["--json", "doctor"], ["ps"], ["--json", "ps"]]) {
      const r = await runCli(args, { home, env: cliEnv });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain("password=***");
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
  });

  it("a refused login names neither the wrong password nor the right one", async () => {
    const wrong = `Wrong-${randomBytes(4).toString("hex")}`;
    for (const url of [withQueryPassword(wrong), base.replace(`${ROLE}@`, `${ROLE}:${wrong}@`)]) {
      const home = homeWith({ url });
      const doctor = await runCli(["--json", "doctor"], { home, env: cliEnv });
      expect(doctor.json().findings[0].code).toBe("pg.auth");
      const ps = await runCli(["--json", "ps"], { home, env: cliEnv });
      expect(ps.stderr).toContain("HEARTH_PG_AUTH");
      const err = await openStore({ home, env: {} }).catch((e: unknown) => e as HearthError);
      expect(err).toBeInstanceOf(HearthError);
      expect((err as HearthError).code).toBe("HEARTH_PG_AUTH");
      for (const text of [doctor.stdout, ps.stderr, JSON.stringify((err as HearthError).toJSON())])
        expect(text).not.toContain(wrong);
      expect((err as HearthError).message).not.toContain(wrong);
    }
  });

  it("the gateway's readiness line masks a password= parameter", async () => {
    const gateway = await startGateway(homeWith({ url: withQueryPassword(SECRET) }));
    try {
      expect(gateway.path).toContain("password=***");
      expect(JSON.stringify(gateway.events)).not.toContain(SECRET);
    } finally {
      await gateway.kill("SIGTERM");
    }
  });

  it("takes the password from PGPASSWORD or a private password file, and refuses a readable one", async () => {
    const fromEnv = await runCli(["--json", "doctor"], {
      home: homeWith({ url: base }),
      env: { ...cliEnv, PGPASSWORD: SECRET },
    });
    expect(fromEnv.code).toBe(0);
    const home = homeWith({ url: base, passwordFile: "pg-password" });
    const file = join(home, "pg-password");
    writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
    const fromFile = await runCli(["--json", "ps"], { home, env: cliEnv });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).not.toContain(SECRET);
    const store = await openStore({ home, env: {} });
    expect(store.path).not.toContain(SECRET);
    await store.close();

    chmodSync(file, 0o640);
    const refused = await runCli(["--json", "ps"], { home, env: cliEnv });
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stderr).error.code).toBe("HEARTH_PASSWORD_FILE_UNSAFE");
    expect(refused.stderr).not.toContain(SECRET);
    const err = await openStore({ home, env: {} }).catch((e: unknown) => e as HearthError);
    expect((err as HearthError).code).toBe("HEARTH_PASSWORD_FILE_UNSAFE");
  });

  it("migrate with a password on its command line still works, and warns that others can read it", async () => {
    const home = tempHome();
    (await openStore({ home, env: {} })).close();
    const target = await freshPgDatabase();
    const r = await runCli(["migrate", "--to", target], { home, env: cliEnv });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("warning: the password in --to is visible to other users");
    expect(r.stdout).not.toContain(`:${new URL(target).password}@`);
    // --json: the warning is in the report, and stderr stays empty.
    const json = await runCli(["--json", "migrate", "--to", target], { home, env: cliEnv });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe("");
    expect(json.json().warnings[0]).toContain("the password in --to is visible to other users");
  });

  it.skipIf(!scriptTool)(
    "migrate on a terminal asks for the password, without echo, when nothing else gives one",
    async () => {
      const target = await freshPgDatabase();
      granted.push(target);
      const db = new URL(target).pathname.slice(1);
      await asAdmin(target, [
        `GRANT ALL ON DATABASE ${db} TO ${ROLE}`,
        `GRANT ALL ON SCHEMA public TO ${ROLE}`,
      ]);
      const u = new URL(target);
      u.username = ROLE;
      u.password = "";
      const home = tempHome();
      (await openStore({ home, env: {} })).close();
      const env: NodeJS.ProcessEnv = { ...process.env, ...cliEnv };
      delete env.PGPASSWORD;
      // script(1) gives the command a terminal; the password is typed once the prompt shows.
      const command = [process.execPath, CLI, "--home", home, "migrate", "--to", u.toString()]
        .map((a) => `'${a}'`)
        .join(" ");
      const child = spawn(scriptTool!, ["-qec", command, "/dev/null"], { env });
      let out = "";
      let typed = false;
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (!typed && out.includes("(empty: none): ")) {
          typed = true;
          child.stdin.write(`${SECRET}\r`);
        }
      });
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      expect(out).toContain(`password for postgres://${ROLE}@`);
      expect(code, out).toBe(0);
      expect(out).toContain("verified:");
      expect(out).not.toContain(SECRET);
      expect(out).not.toContain("warning");
    },
  );
});
