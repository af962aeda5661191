// `npm start`: create a demo home with a few sessions (once), then run
// `hearth doctor` against it. Later the gateway takes over this command.
import { spawnSync } from "node:child_process";
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
const result = spawnSync(
  process.execPath,
  ["dist/cli/main.js", "--home", home, "doctor", ...process.argv.slice(2)],
  {
    stdio: "inherit",
  },
);
process.exit(result.status ?? 1);
