import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { run } from "../../helpers/process.js";

const DIST = fileURLToPath(new URL("../../../dist/config/", import.meta.url));

/**
 * Runs `body` in a fresh node process after counting every z.object() the
 * built config modules make (the count: how many object schemas a step
 * built), and returns what it printed.
 */
async function counted(body: string): Promise<Record<string, number>> {
  const script = `
    const { z } = await import(${JSON.stringify(`${DIST}zod.js`)});
    let built = 0;
    const object = z.object;
    z.object = (...args) => { built++; return object(...args); };
    const { validateConfig } = await import(${JSON.stringify(`${DIST}validate.js`)});
    const { SECTIONS, configSchema } = await import(${JSON.stringify(`${DIST}schema.js`)});
    const out = {};
    const step = (name, fn) => { const before = built; fn(); out[name] = built - before; };
    ${body}
    console.log(JSON.stringify(out));
  `;
  const r = await run(process.execPath, ["--input-type=module", "-e", script]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Record<string, number>;
}

// A configured home's command builds the schema of the sections its
// configuration holds, not all eleven (src/config/validate.ts; what it saves:
// docs/benchmarks.md, workload 12).
describe("which parts of the config schema a process builds", () => {
  it("none at import, the gateway's alone for a config that sets gateway.port, the rest only when asked", async () => {
    const got = await counted(`
      out.atImport = built;
      step("gatewayPort", () => validateConfig({ gateway: { port: 9000 } }, "t"));
      step("again", () => validateConfig({ gateway: { port: 9001 } }, "t"));
      step("whole", () => configSchema());
    `);
    const alone = await counted(`step("gatewayAlone", () => SECTIONS.gateway());`);
    expect(got.atImport).toBe(0);
    expect(alone.gatewayAlone).toBeGreaterThan(0);
    expect(got.gatewayPort).toBe(alone.gatewayAlone);
    expect(got.again).toBe(0);
    // The other ten sections are most of the schema.
    expect(got.whole).toBeGreaterThan(2 * (got.gatewayPort ?? Number.POSITIVE_INFINITY));
  });
});
