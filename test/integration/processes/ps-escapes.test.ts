import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../../src/index.js";
import { runCli } from "../../helpers/cli.js";
import { tempHome } from "../../helpers/home.js";
import { spawnNode } from "../../helpers/process.js";

const OFD_HOLDER = fileURLToPath(new URL("../../fixtures/ofd-holder.mjs", import.meta.url));
const ESC = "\x1b";

describe("another process's command line never drives the terminal", () => {
  it("escapes control characters of holders' command lines in ps and in refusals; --json stays exact", async () => {
    const home = tempHome();
    const store = await openStore({ home });
    await store.close();
    // A holder whose argv retitles the terminal and clears the screen.
    const hostile = `${ESC}]0;owned${ESC}\\${ESC}[2J`;
    const holder = spawnNode([OFD_HOLDER, store.path, hostile]);
    await holder.line((l) => l === "ready");

    const ps = await runCli(["ps"], { home });
    expect(ps.code).toBe(0);
    expect(ps.stdout).not.toContain(ESC);
    expect(ps.stdout).toContain("\\x1b]0;owned");
    const refused = await runCli(["sessions", "optimize"], { home });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`pid ${holder.pid}`);
    expect(refused.stderr).not.toContain(ESC);
    const json = await runCli(["--json", "ps"], { home });
    const h = json.json().profiles[0].holders.find((x: { pid: number }) => x.pid === holder.pid);
    expect(h.commandLine).toContain(hostile);
  });
});
