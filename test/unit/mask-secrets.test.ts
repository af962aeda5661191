import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { maskArgv, maskSecrets } from "../../src/mask-secrets.js";
import { describeProcess } from "../../src/process/identity.js";
import { maskUrl } from "../../src/store/pg/url.js";

const SECRET = "S3cr3t-pw";

describe("maskSecrets: every form of a password is masked", () => {
  it.each([
    ["user info", `postgres://u:${SECRET}@db.example:5432/hearth`],
    ["user info holding @", `postgres://u:${SECRET}@x@db.example/hearth`],
    ["password= parameter", `postgres://u@db.example/hearth?sslmode=require&password=${SECRET}`],
    ["Password= in another case", `postgres://u@db.example/hearth?PassWord=${SECRET}&x=1`],
    ["an escaped key", `postgres://u@db.example/hearth?%70assword=${SECRET}`],
    ["PGPASSWORD in a command line", `env PGPASSWORD=${SECRET} pg_dump -d hearth`],
    ["--password=", `tool --password=${SECRET} --host h`],
    ["--password <value>", `tool --password ${SECRET} --host h`],
    ["a libpq conninfo", `host=h dbname=hearth password=${SECRET} sslmode=require`],
    ["a quoted conninfo value", `host=h password='${SECRET} with space' user=u`],
    ["sslpassword", `host=h sslpassword=${SECRET}`],
    ["a URL inside a message", `could not connect to postgres://u:${SECRET}@h/db: refused`],
  ])("%s", (_name, text) => {
    const masked = maskSecrets(text);
    expect(masked).not.toContain(SECRET);
    expect(masked).toContain("***");
  });

  it("keeps everything else readable", () => {
    expect(maskUrl(`postgres://u:${SECRET}@db.example:5432/hearth?sslmode=require`)).toBe(
      "postgres://u:***@db.example:5432/hearth?sslmode=require",
    );
    expect(maskUrl(`postgres://u@h/db?sslmode=require&password=${SECRET}&x=1`)).toBe(
      "postgres://u@h/db?sslmode=require&password=***&x=1",
    );
    expect(maskSecrets("hearth migrate --to postgres://u@h/db --token-file=x")).toBe(
      "hearth migrate --to postgres://u@h/db --token-file=x",
    );
  });

  it("masks a known password wherever it appears, raw or URL-encoded", () => {
    const pw = "p@ss word/1";
    expect(maskSecrets(`auth failed for ${pw} and ${encodeURIComponent(pw)}`, [pw])).toBe(
      "auth failed for *** and ***",
    );
  });

  it("masks argv word by word, and the word after --password", () => {
    expect(
      maskArgv(["hearth", "migrate", "--to", `postgres://u:${SECRET}@h/db`, "--password", SECRET]),
    ).toEqual(["hearth", "migrate", "--to", "postgres://u:***@h/db", "--password", "***"]);
  });
});

describe("another process's command line, as hearth ps and the dashboard read it", () => {
  it("never shows the password it carries", async () => {
    const child = spawn(
      process.execPath,
      [
        "-e",
        "setInterval(() => {}, 1000)",
        "--",
        "migrate",
        "--to",
        `postgres://u:${SECRET}@h/db?password=${SECRET}`,
        `PGPASSWORD=${SECRET}`,
      ],
      { stdio: "ignore" },
    );
    try {
      await new Promise((r) => child.once("spawn", r));
      let line: string | undefined;
      for (let i = 0; i < 200 && !line?.includes("migrate"); i++) {
        line = describeProcess(child.pid!).commandLine;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(line).toContain("migrate --to postgres://u:***@h/db?password=***");
      expect(line).not.toContain(SECRET);
    } finally {
      child.kill();
    }
  });
});
