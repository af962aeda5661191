import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { writeConfig } from "../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../helpers/home.js";

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

function hearth(...args: string[]) {
  // Bounded: a command that should have refused must not run on.
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** BEL, ESC, CR and RIGHT-TO-LEFT OVERRIDE, raw. */
const RAW_CONTROLS = ["\u0007", "\u001b", "\r", "\u202e"];
const mode = (path: string) => statSync(path).mode & 0o7777;
const isRoot = process.getuid?.() === 0;

afterEach(cleanupHomes);

async function seeded(content: string, title?: string): Promise<{ home: string; id: string }> {
  const home = tempHome();
  const store = await openStore({ home });
  const s = await store.sessions.create(title === undefined ? {} : { title });
  await store.messages.appendBatch(s.id, [
    { role: "user", content },
    { role: "assistant", content: "ok" },
  ]);
  await store.close();
  return { home, id: s.id };
}

describe("home directories hearth did not create are never chmod'ed (item 5)", () => {
  it("refuses a shared sticky world-writable directory as a home, naming it and leaving it as it was", () => {
    const shared = join(dirname(tempHome()), "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const r = hearth("--home", shared, "--json", "token", "create");
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stderr);
    expect(error.code).toBe("HEARTH_PATH_UNSAFE_HOME");
    expect(error.message).toContain(shared);
    expect(mode(shared)).toBe(0o1777);
    expect(readdirSync(shared)).toEqual([]);
  });

  it("refuses an existing directory others can read that is not a hearth home", () => {
    const dir = join(dirname(tempHome()), "projects");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const r = hearth("--home", dir, "token", "create");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`refusing ${dir}`);
    expect(mode(dir)).toBe(0o755);
    expect(existsSync(join(dir, "state.db"))).toBe(false);
    expect(existsSync(join(dir, "run"))).toBe(false);
  });

  it("tightens a hearth home that was loosened, and uses a private directory as it is", () => {
    // A home holding this user's config.json of hearth's sections is a hearth home, even before its first store.
    const home = tempHome();
    writeConfig(home, { durability: {} });
    chmodSync(home, 0o755);
    expect(hearth("--home", home, "token", "create").code).toBe(0);
    expect(mode(home)).toBe(0o700);

    const mine = join(dirname(tempHome()), "mine");
    mkdirSync(mine, { mode: 0o700 });
    expect(hearth("--home", mine, "token", "create").code).toBe(0);
    expect(mode(mine)).toBe(0o700);
    expect(existsSync(join(mine, "state.db"))).toBe(true);
  });
});

describe("only a recognisable hearth home is chmod'ed (an unrelated config.json is no hearth mark)", () => {
  it("leaves a sticky shared directory under an unrelated config.json exactly as it was", () => {
    const app = join(dirname(tempHome()), "other-app");
    mkdirSync(app, { mode: 0o755 });
    writeFileSync(join(app, "config.json"), '{"name":"other-app","port":3000}\n', { mode: 0o600 });
    const shared = join(app, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    for (const args of [
      ["token", "create"],
      ["token", "create", "--label", "x"],
    ]) {
      const r = hearth("--home", shared, "--json", ...args);
      expect(r.code, r.stderr).toBe(1);
      const { error } = JSON.parse(r.stderr);
      expect(error.code).toBe("HEARTH_PATH_UNSAFE_HOME");
      expect(error.message).toContain("cannot tell it is a hearth home");
    }
    expect(mode(shared)).toBe(0o1777);
    expect(mode(app)).toBe(0o755);
    expect(readdirSync(shared)).toEqual([]);
  });

  it("cannot tell from an empty, unparsable or foreign-keyed config.json, nor at a place hearth puts no directory", () => {
    for (const text of ["{}\n", "not json", '{"durability":{},"name":"x"}', "[]"]) {
      const dir = join(dirname(tempHome()), `cfg-${readdirSync(dirname(tempHome())).length}`);
      mkdirSync(dir, { mode: 0o700 });
      writeFileSync(join(dir, "config.json"), text, { mode: 0o600 });
      chmodSync(dir, 0o755);
      const r = hearth("--home", dir, "token", "create");
      expect(r.code, text).not.toBe(0);
      expect(mode(dir), text).toBe(0o755);
    }
    // A real hearth home above does not vouch for a directory hearth never puts there.
    const home = tempHome();
    writeConfig(home, { durability: {} });
    const projects = join(home, "projects");
    mkdirSync(projects);
    chmodSync(projects, 0o755);
    const r = hearth("--home", projects, "--json", "token", "create");
    expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_PATH_UNSAFE_HOME");
    expect(mode(projects)).toBe(0o755);
  });
});

describe("a config.json another user could have written is refused (item 6)", () => {
  it("refuses a config.json writable by group or others", async () => {
    const { home } = await seeded("hello");
    writeConfig(home, { gateway: { host: "0.0.0.0", requireAuth: true } });
    for (const loose of [0o666, 0o620, 0o602]) {
      chmodSync(join(home, "config.json"), loose);
      const r = hearth("--home", home, "--json", "sessions", "list");
      expect(r.code, loose.toString(8)).toBe(1);
      const { error } = JSON.parse(r.stderr);
      expect(error.code).toBe("HEARTH_CONFIG_UNSAFE");
      expect(error.message).toContain(join(home, "config.json"));
    }
    chmodSync(join(home, "config.json"), 0o600);
    expect(hearth("--home", home, "sessions", "list").code).toBe(0);
  });

  it.runIf(isRoot)("refuses a config.json owned by another user", async () => {
    const { home } = await seeded("hello");
    writeConfig(home, { gateway: { host: "0.0.0.0", requireAuth: true } });
    const file = join(home, "config.json");
    chmodSync(file, 0o644);
    chownSync(file, 65534, 65534);
    const r = hearth("--home", home, "--json", "token", "create");
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stderr);
    expect(error.code).toBe("HEARTH_CONFIG_UNSAFE");
    expect(error.message).toContain("uid 65534");
  });

  it("accepts only key-like variable names in apiKeyEnv", async () => {
    const { home } = await seeded("hello");
    for (const name of ["PATH", "HOME", "DATABASE_URL", "openai_api_key", "AWS_SECRET"]) {
      writeConfig(home, { gateway: { responder: { kind: "openai", apiKeyEnv: name } } });
      const r = hearth("--home", home, "--json", "sessions", "list");
      expect(r.code, name).toBe(1);
      expect(JSON.parse(r.stderr).error.code).toBe("HEARTH_CONFIG_INVALID");
    }
    for (const name of ["OPENAI_API_KEY", "GROQ_KEY", "HF_TOKEN"]) {
      writeConfig(home, { gateway: { responder: { kind: "echo", apiKeyEnv: name } } });
      expect(hearth("--home", home, "sessions", "list").code, name).toBe(0);
    }
  });
});

describe("sessions export -o (item 9)", () => {
  it("refuses an existing file, a symlink or a missing directory with exit 1 naming the file", async () => {
    const { home, id } = await seeded("hello");
    const dir = dirname(home);
    const existing = join(dir, "existing.jsonl");
    writeFileSync(existing, "keep me\n");
    const target = join(dir, "target.txt");
    writeFileSync(target, "target\n");
    const link = join(dir, "link.jsonl");
    symlinkSync(target, link);
    const dangling = join(dir, "dangling.jsonl");
    symlinkSync(join(dir, "nowhere"), dangling);
    const missing = join(dir, "no-such-dir", "out.jsonl");
    for (const output of [existing, link, dangling, missing]) {
      const r = hearth("--home", home, "sessions", "export", id, "-o", output);
      expect(r.code, output).toBe(1);
      expect(r.stderr).toContain(output);
    }
    expect(readFileSync(existing, "utf8")).toBe("keep me\n");
    expect(readFileSync(target, "utf8")).toBe("target\n");
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
    const json = hearth("--home", home, "--json", "sessions", "export", id, "-o", existing);
    expect(JSON.parse(json.stderr).error.code).toBe("HEARTH_OUTPUT_UNWRITABLE");
  });

  it("removes the partial file of a failed export, so the retry works", async () => {
    const { home, id } = await seeded("hello");
    const out = join(dirname(home), "one.json");
    const failed = hearth(
      "--home",
      home,
      "sessions",
      "export",
      "--format",
      "json",
      "no-such-id",
      "-o",
      out,
    );
    expect(failed.code).toBe(1);
    expect(existsSync(out)).toBe(false);
    const retry = hearth("--home", home, "sessions", "export", "--format", "json", id, "-o", out);
    expect(retry.code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).session.id).toBe(id);
  });
});

describe("terminal escapes in human output (item 10)", () => {
  it("escapes control characters in sessions show/list/search; --json stays exact", async () => {
    const evil = "look\u001b]0;pwned\u0007\u001b[2J\rover\u202edrawn\nsecond line";
    const { home, id } = await seeded(evil, "title\u001b[31mred\nnext");
    const show = hearth("--home", home, "sessions", "show", id);
    expect(show.code).toBe(0);
    for (const c of RAW_CONTROLS) expect(show.stdout).not.toContain(c);
    expect(show.stdout).toContain(
      "look\\x1b]0;pwned\\x07\\x1b[2J\\x0dover\\u202edrawn\nsecond line",
    );
    const list = hearth("--home", home, "sessions", "list");
    expect(list.stdout).not.toContain("\u001b");
    expect(list.stdout).toContain("title\\x1b[31mred next");
    const search = hearth("--home", home, "sessions", "search", "pwned");
    expect(search.code).toBe(0);
    for (const c of RAW_CONTROLS) expect(search.stdout).not.toContain(c);

    const json = JSON.parse(hearth("--home", home, "--json", "sessions", "show", id).stdout);
    expect(json.messages[0].content).toBe(evil);
    expect(json.session.title).toBe("title\u001b[31mred next");
  });
});
