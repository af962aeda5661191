// An OpenAI Agents SDK agent whose conversation lives in a hearth store.
// Run it twice (or from two terminals): the second run continues the first
// one's conversation.
//   npm install hearth @openai/agents zod
//   node openai-agents.mjs [home]
// With OPENAI_API_KEY set it talks to OpenAI; without, a scripted stand-in
// model (a tool call, then an answer) plays the model so it runs offline.
import { Agent, run, setTracingDisabled, tool, Usage } from "@openai/agents";
import { HearthSession } from "hearth/openai-agents";
import { z } from "zod";

const add = tool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});

/** Stands in for a real model: asks for `add`, then reports its result. */
const scripted = {
  async getResponse({ input }) {
    const items = Array.isArray(input) ? input : [];
    const turn = items.filter((i) => i.role === "user").length;
    const result = items.find((i) => i.type === "function_call_result" && i.callId === `call-${turn}`);
    const output = result
      ? [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `The sum is ${result.output.text ?? result.output}.` }] }]
      : [{ type: "function_call", callId: `call-${turn}`, name: "add", arguments: JSON.stringify({ a: turn, b: 40 }), status: "completed" }];
    return { usage: new Usage(), output };
  },
  async *getStreamedResponse() {
    throw new Error("not streamed in this example");
  },
};

if (!process.env.OPENAI_API_KEY) setTracingDisabled(true);
const agent = new Agent({
  name: "Adder",
  instructions: "Add the numbers the user gives you with the add tool.",
  tools: [add],
  model: process.env.OPENAI_API_KEY ? "gpt-4.1-mini" : scripted,
});

const session = await HearthSession.open(
  { home: process.argv[2] ?? "./.hearth-demo" },
  { sessionId: "demo-conversation", title: "Adder demo" },
);
try {
  const turns = (await session.getItems()).filter((i) => i.role === "user").length;
  const result = await run(agent, `What is ${turns + 1} plus 40?`, { session });
  console.log(JSON.stringify({ answer: result.finalOutput }));
  // The last two items of the conversation: the tool's result and the answer.
  console.log(JSON.stringify({ items: (await session.getItems()).length, last: await session.getItems(2) }));
} finally {
  await session.close();
}
