/**
 * `hearth service install`: the systemd unit has one text
 * (src/ops/service-unit.ts), the one docs/operations.md shows; --dry-run
 * prints it; install writes it (0644) into the given folder, is idempotent,
 * refuses to replace a different unit without --force; it never enables it.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DOC_EXAMPLE, renderUnit } from "../../../src/ops/service-unit.js";
import { CLI, runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";

describe("hearth service install", () => {
  it("docs/operations.md shows the unit the code writes", () => {
    const doc = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
    const block = /## The systemd unit[\s\S]*?```ini\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(renderUnit(DOC_EXAMPLE));
    expect(block).toContain("LimitNOFILE=65536");
    expect(block).toContain("RestartPreventExitStatus=78");
  });

  it("prints it with --dry-run, writes it once, and refuses a different one without --force", async () => {
    const home = tempHome();
    const dir = join(home, "units");
    mkdirSync(dir, { recursive: true });
    const dry = await runCli(["service", "install", "--user", "--dry-run", "--unit-dir", dir], {
      home,
    });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`ExecStart=${process.execPath} ${CLI} start`);
    expect(dry.stdout).toContain(`Environment=HEARTH_HOME=${home}`);
    expect(dry.stdout).toContain("WantedBy=default.target");
    expect(dry.stdout).not.toContain("User=");

    const written = await runCli(["--json", "service", "install", "--user", "--unit-dir", dir], {
      home,
    });
    expect(written.code).toBe(0);
    const path = join(dir, "hearth.service");
    expect(written.json()).toMatchObject({ path, result: "written" });
    expect(readFileSync(path, "utf8")).toBe(dry.stdout);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    const again = await runCli(["--json", "service", "install", "--user", "--unit-dir", dir], {
      home,
    });
    expect(again.json().result).toBe("unchanged");

    writeFileSync(path, "[Unit]\nDescription=mine\n");
    const refused = await runCli(["--json", "service", "install", "--user", "--unit-dir", dir], {
      home,
    });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.code).toBe("HEARTH_UNIT_EXISTS");
    expect(readFileSync(path, "utf8")).toBe("[Unit]\nDescription=mine\n");
    const forced = await runCli(
      ["service", "install", "--system", "--run-as", "hearth", "--force", "--unit-dir", dir],
      { home },
    );
    expect(forced.code).toBe(0);
    expect(readFileSync(path, "utf8")).toContain("User=hearth\n");
    const both = await runCli(["service", "install", "--user", "--system", "--unit-dir", dir], {
      home,
    });
    expect(both.code).toBe(2);
  });
});
