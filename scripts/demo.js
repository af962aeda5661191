// `npm start`: create a demo home with a few sessions and two scheduled jobs
// (once), then run `hearth start` on it: the gateway (echo responder,
// 127.0.0.1:8787 unless HEARTH_GATEWAY_PORT says otherwise), the dashboard
// (127.0.0.1:8788: open the printed login link) and the scheduler (/status on
// 127.0.0.1:8789). Ctrl-C stops everything.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../dist/index.js";

const home = process.env.HEARTH_HOME ?? join(process.cwd(), ".demo-home");
if (!existsSync(join(home, "config.json"))) {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const jobs = [
    { name: "nightly-backup", schedule: "0 3 * * *", kind: "backup" },
    { name: "weekly-optimize", schedule: "30 3 * * 0", kind: "optimize" },
  ];
  writeFileSync(
    join(home, "config.json"),
    `${JSON.stringify({ scheduler: { jobs } }, null, 2)}\n`,
    {
      mode: 0o600,
    },
  );
}
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
  ["dist/cli/main.js", "--home", home, "start", ...process.argv.slice(2)],
  { stdio: "inherit" },
);
// A Ctrl-C in the terminal reaches hearth start directly (same process group); forward a SIGTERM.
process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("exit", (code) => process.exit(code ?? 1));
