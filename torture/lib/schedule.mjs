// The schedule of a run, drawn whole from the seed before anything starts:
// the same seed gives the same actions, parameters and instants.
import { COMMANDS } from "./maintenance.mjs";

const WEIGHTS = {
  worker: 6,
  cli: 7,
  chat: 2,
  kill: 3,
  failpoint: 1.5,
  scratch: 0.7,
  fill: 0.4,
  "stopped-window": 0.4,
  stray: 2,
  stop: 2,
};
const CLI = Object.keys(COMMANDS);
const TARGETS = ["gateway", "gateway", "dashboard", "worker"];
/** Failpoints fired in the gateway (at its Kth commit) or on the live store's backup. */
const FAILPOINTS = [
  "write.after-commit",
  "write.after-commit",
  "write.before-commit",
  "backup.mid-publish",
];
const WORKER_FAILPOINTS = ["write.after-commit", "write.before-commit"];

export function makeSchedule(rng, totalMs) {
  const events = [];
  let at = 1_000;
  while (at < totalMs - 2_000) {
    const action = rng.weighted(WEIGHTS);
    const event = { at, action };
    if (action === "worker") {
      event.messages = rng.int(1, 25);
      const v = rng.next();
      event.variant = v < 0.15 ? "ddl" : v < 0.3 ? "failpoint" : "plain";
      if (event.variant === "failpoint") {
        event.failpoint = rng.pick(WORKER_FAILPOINTS);
        event.k = rng.int(1, event.messages + 3);
      }
    }
    if (action === "cli") event.command = rng.pick(CLI);
    if (action === "chat") {
      event.turns = rng.int(1, 4);
      event.handoff = rng.next() < 0.4;
    }
    if (action === "kill") event.target = rng.pick(TARGETS);
    if (action === "failpoint") {
      event.failpoint = rng.pick(FAILPOINTS);
      event.k = rng.int(1, 40);
    }
    if (action === "scratch") event.drill = rng.pick(["repair", "migrate"]);
    if (action === "fill") event.ms = rng.int(500, 3_000);
    if (action === "stray") event.rounds = rng.int(1, 50);
    if (action === "stop") {
      event.target = rng.pick(TARGETS);
      event.ms = rng.int(100, 1_500);
    }
    event.pick = rng.next(); // which process, when there are several
    events.push(event);
    at += rng.int(150, 1_500);
  }
  return events;
}
