import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { run } from "../../helpers/process.js";

// The runnable examples of docs/adapters/, run as a user would run them
// (importing "hearth/langgraph" and "hearth/openai-agents" by package name),
// twice each, in separate processes on one store.
const EXAMPLES = fileURLToPath(new URL("../../../docs/adapters/examples/", import.meta.url));

async function example(name: string, home: string): Promise<Record<string, unknown>[]> {
  const result = await run(process.execPath, [`${EXAMPLES}${name}`, home], {
    env: { OPENAI_API_KEY: "" },
  });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("the adapter docs' examples", () => {
  it("langgraph.mjs: a real LangGraph graph keeps its thread in hearth across runs", async () => {
    const home = tempHome();
    const [first, firstCount] = await example("langgraph.mjs", home);
    const [second, secondCount] = await example("langgraph.mjs", home);
    expect((first!.visits as string[]).length).toBe(1);
    expect(second!.visits as string[]).toHaveLength(2);
    expect((second!.visits as string[])[0]).toBe((first!.visits as string[])[0]);
    expect(secondCount!.checkpoints).toBe(2 * (firstCount!.checkpoints as number));
  });

  it("openai-agents.mjs: the second run continues the first run's conversation", async () => {
    const home = tempHome();
    const [first, firstItems] = await example("openai-agents.mjs", home);
    const [second, secondItems] = await example("openai-agents.mjs", home);
    expect(first).toEqual({ answer: "The sum is 41." });
    expect(second).toEqual({ answer: "The sum is 42." });
    expect(firstItems!.items).toBe(4);
    expect(secondItems!.items).toBe(8);
  });
});
