// `npm start`: create a demo home with a few sessions (once), then run the
// gateway on it (echo responder, 127.0.0.1:8787 unless HEARTH_GATEWAY_PORT
// says otherwise). Ctrl-C stops it.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../dist/index.js";

const home = process.env.HEARTH_HOME ?? join(process.cwd(), ".demo-home");
if (!existsSync(join(home, "state.db"))) {
  const store = await openStore({ home });
  const plans = await store.sessions.create({ source: "cli", title: "Weekend plans" });
  await store.messages.appendBatch(plans.id, [
    { role: "user", content: "What should I pack for a two-day hike?" },
    { role: "assistant", content: "Water, layers, a map, snacks and a headlamp." },
  ]);
  const notes = await store.sessions.create({
    source: "telegram",
    chatKey: "chat-42",
    title: "Reading notes",
  });
  await store.messages.append(notes.id, {
    role: "user",
    content: "Summarise chapter three for me.",
  });
  await store.messages.append(notes.id, {
    role: "assistant",
    content: "Chapter three argues that small habits compound.",
  });
  await store.sessions.create({ source: "http", title: "Empty draft" });
  await store.close();
  console.log(`created a demo home at ${home}`);
}
console.log(`demo home: ${home}`);
const child = spawn(
  process.execPath,
  ["dist/cli/main.js", "--home", home, "gateway", "run", ...process.argv.slice(2)],
  { stdio: ["inherit", "pipe", "inherit"] },
);
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  for (const line of String(chunk).split("\n")) {
    if (!line.includes('"gateway.ready"')) continue;
    const { address } = JSON.parse(line);
    console.log(`hearth gateway listening on ${address}`);
    console.log(
      `try: curl -s ${address}/v1/messages -H 'content-type: application/json' -d '{"platform":"demo","chat":"1","content":"hello"}'`,
    );
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 1));
