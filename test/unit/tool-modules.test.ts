// tools.modules runs code with the process's rights: a module is loaded only
// when it, the real file behind a link, each link and each directory above it
// belong to this user or root and nobody else may write them (issue 45.2).
// Real files, real owners: the tests run as root, so chown to 65534 works.
import { chmodSync, chownSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/validate.js";
import { HearthError } from "../../src/errors.js";
import { ToolRegistry } from "../../src/turn/tools/registry.js";
import { tempHome } from "../helpers/home.js";

const MODULE = `export const tools = [{ name: "probe_tool", description: "d", parameters: {}, idempotent: true, run: async () => "ran" }];\n`;
const root = process.getuid?.() === 0;

/** A private directory holding a good module (0700 dir, 0600 file). */
function moduleDir(): { dir: string; file: string } {
  const dir = join(tempHome(), "..", "mods");
  mkdirSync(dir, { mode: 0o700 });
  const file = join(dir, "tools.mjs");
  writeFileSync(file, MODULE, { mode: 0o600 });
  return { dir, file };
}

const load = (modules: string[]) =>
  ToolRegistry.load(validateConfig({ tools: { enabled: ["probe_tool"], modules } }, "c").tools);

async function refusal(modules: string[]): Promise<HearthError> {
  const err = await load(modules).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(HearthError);
  return err as HearthError;
}

describe("tools.modules ownership (S1, issue 45.2)", () => {
  it("loads a module this user owns in a private directory (the temp dir above is sticky)", async () => {
    const { file } = moduleDir();
    const registry = await load([file]);
    expect((await registry.specs("default")).map((s) => s.name)).toEqual(["probe_tool"]);
  });

  it("refuses a world-writable module, naming the file, its owner and its mode", async () => {
    const { file } = moduleDir();
    chmodSync(file, 0o666);
    const err = await refusal([file]);
    expect(err.code).toBe("HEARTH_TOOL_MODULE_UNSAFE");
    expect(err.message).toContain(file);
    expect(err.message).toContain("mode 0666");
    expect(err.message).toMatch(/owner uid \d+/);
    expect(err.hint).toContain(`chmod go-w ${file}`);
    expect(err.details).toMatchObject({ path: file, kind: "file", mode: "0666" });
  });

  it.runIf(root)("refuses a module owned by another user, even read-only", async () => {
    const { file } = moduleDir();
    chownSync(file, 65534, 65534);
    chmodSync(file, 0o644);
    const err = await refusal([file]);
    expect(err.code).toBe("HEARTH_TOOL_MODULE_UNSAFE");
    expect(err.message).toContain("owner uid 65534");
    expect(err.message).toContain("mode 0644");
  });

  it("refuses a module in a group-writable directory", async () => {
    const { dir, file } = moduleDir();
    chmodSync(dir, 0o770);
    const err = await refusal([file]);
    expect(err.code).toBe("HEARTH_TOOL_MODULE_UNSAFE");
    expect(err.resource).toBe(dir);
    expect(err.message).toContain(`its directory ${dir}`);
    expect(err.message).toContain("mode 0770");
  });

  it.runIf(root)("refuses a module whose directory another user owns", async () => {
    const { dir, file } = moduleDir();
    chownSync(dir, 65534, 65534);
    const err = await refusal([file]);
    expect(err).toMatchObject({ code: "HEARTH_TOOL_MODULE_UNSAFE", resource: dir });
  });

  it("follows a symbolic link to a good file, and refuses one whose target fails the rule", async () => {
    const { dir, file } = moduleDir();
    const link = join(dir, "link.mjs");
    symlinkSync(file, link);
    expect((await (await load([link])).specs("default")).map((s) => s.name)).toEqual([
      "probe_tool",
    ]);

    const other = moduleDir();
    chmodSync(other.file, 0o646);
    const bad = join(dir, "bad-link.mjs");
    symlinkSync(other.file, bad);
    const err = await refusal([bad]);
    expect(err.code).toBe("HEARTH_TOOL_MODULE_UNSAFE");
    expect(err.resource).toBe(other.file);
    expect(err.message).toContain(`${bad}: its file ${other.file}`);
  });

  it.runIf(root)("refuses a symbolic link another user owns, even to a good file", async () => {
    const { dir, file } = moduleDir();
    const link = join(dir, "theirs.mjs");
    symlinkSync(file, link);
    lchownSync(link, 65534, 65534);
    const err = await refusal([link]);
    expect(err).toMatchObject({ code: "HEARTH_TOOL_MODULE_UNSAFE", resource: link });
    expect(err.hint).toContain("real file");
  });

  it("a missing module is a configuration error, not a crash", async () => {
    const { dir } = moduleDir();
    const err = await refusal([join(dir, "absent.mjs")]);
    expect(err.code).toBe("HEARTH_CONFIG_INVALID");
    expect(err.message).toContain("absent.mjs");
  });
});
