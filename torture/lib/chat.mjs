// `hearth chat` in a torture run: a terminal chat (a CLI writer on the same
// store) sends a few turns, and sometimes hands its session to the gateway
// (`/handoff http`). Each turn's reply echoes the turn (the built-in echo
// responder), so the reply names the acknowledged turn: `tchat <id>` goes
// to the ledger under the reply's session. Exit 0 must mean every turn was
// answered and the handoff completed; exit 1 must come with an event or a
// coded error saying what failed; exit 3 must name a holder.
import { CLI } from "./maintenance.mjs";
import { runNode } from "./proc.mjs";

export async function runChat({ home, ledger, stats }, n, turns, handoff) {
  const ids = Array.from({ length: turns }, (_, i) => `k${n}-${i}`);
  const input = `${ids.map((id) => `tchat ${id}`).join("\n")}\n${handoff ? "/handoff http\n" : ""}`;
  const r = await runNode(
    [
      CLI,
      "--home",
      home,
      "--json",
      "chat",
      "--chat",
      `tc${n % 4}`,
      "--claim-window-ms",
      "8000",
      "--dispatch-timeout-ms",
      "30000",
    ],
    { input, ms: 120_000 },
  );
  stats.chat.runs++;
  const key = `chat exit ${r.signal ?? r.code}`;
  stats.cli[key] = (stats.cli[key] ?? 0) + 1;
  const events = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    });
  let answered = 0;
  for (const e of events) {
    if (e.event !== "reply") continue;
    const m = /^echo: tchat (k\d+-\d+)$/.exec(e.reply?.content ?? "");
    if (!m || !e.session) continue;
    ledger.ack(m[1], e.session, "chat");
    answered++;
  }
  stats.chat.turns += answered;
  // The last handoff event is the outcome (handoff.running events report heartbeats before it).
  const outcome = events
    .filter((e) =>
      [
        "handoff.completed",
        "handoff.failed",
        "handoff.unclaimed",
        "handoff.still_running",
      ].includes(e.event),
    )
    .at(-1);
  if (handoff && outcome) {
    stats.chat.handoffs[outcome.event] = (stats.chat.handoffs[outcome.event] ?? 0) + 1;
  }
  if (r.code === 0) {
    if (answered !== turns)
      stats.falseSuccesses.push(
        `chat exited 0 with ${answered} of ${turns} turns answered: ${r.stdout.slice(0, 400)}`,
      );
    if (handoff && outcome?.event !== "handoff.completed")
      stats.falseSuccesses.push(
        `chat exited 0 but its handoff did not complete: ${JSON.stringify(outcome)}`,
      );
  } else if (r.code === 3) {
    if (!/pid \d+/.test(r.stderr))
      stats.badRefusals.push(`chat exited 3 naming no holder: ${r.stderr.slice(0, 400)}`);
  } else if (r.code === 1) {
    // A failed turn or handoff must say so: an event, or a coded error.
    if (
      !/HEARTH_[A-Z_]+/.test(r.stderr + r.stdout) &&
      !(handoff && outcome && outcome.event !== "handoff.completed")
    )
      stats.unexpectedExits.push(`chat exited 1 saying nothing coded: ${r.stderr.slice(0, 400)}`);
  } else {
    stats.unexpectedExits.push(`chat exited ${r.signal ?? r.code}: ${r.stderr.slice(0, 600)}`);
  }
}
