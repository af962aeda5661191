import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { run } from "../../helpers/process.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

// A resolve hook that refuses every SDK package: importing a module that
// needs one fails loudly, as it would for a user who did not install it.
const NO_SDKS = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "export async function resolve(s, c, next) {" +
  "  if (/^@(openai|langchain)\\\\//.test(s)) throw new Error('SDK loaded: ' + s);" +
  "  return next(s, c);" +
  "}"));
`)}`;

async function importWithoutSdks(entry: string) {
  return run(
    process.execPath,
    ["--import", NO_SDKS, "-e", `await import(${JSON.stringify(entry)})`],
    {
      cwd: ROOT,
    },
  );
}

describe("the adapters' SDKs are optional", () => {
  it('import "hearth" loads no SDK package', async () => {
    const result = await importWithoutSdks("./dist/index.js");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("hearth/openai-agents needs the SDK only for its types", async () => {
    const result = await importWithoutSdks("./dist/adapters/openai-agents/index.js");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("hearth/langgraph does load its SDK (the hook works)", async () => {
    const result = await importWithoutSdks("./dist/adapters/langgraph/index.js");
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("SDK loaded: @langchain/");
  });
});
