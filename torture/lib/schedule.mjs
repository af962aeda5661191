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
  // issue 41.5: the supervisor, the scheduler's workers, more writers, more profiles.
  "fleet-kill": 2.5,
  "wal-delete": 0.5,
  damage: 0.4,
  "stray-daemon": 1.5,
  acp: 1.2,
  "dash-chat": 1.2,
};
const PROFILES = ["default", "p1", "p2"];
const FLEET_TARGETS = ["supervisor", "gateway", "scheduler", "dashboard", "worker", "worker"];
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

/**
 * The run opens with one of each fault kind of issue 41.5, so that even a
 * short run fires each (a kind that never fired fails the run); the rest
 * of the schedule is drawn at random.
 */
const TOUR = [
  // A short writer first: a short run also has workers' acknowledged writes to check.
  { action: "worker", messages: 5, variant: "plain" },
  { action: "fleet-kill", target: "worker" },
  { action: "fleet-kill", target: "supervisor" },
  { action: "stray-daemon", pick: 0 },
  { action: "dash-chat", profile: "default", count: 3 },
  { action: "wal-delete", profile: "p1" },
  { action: "acp", profile: "p2", turns: 2, kill: false },
  { action: "fleet-kill", target: "gateway" },
  { action: "stray-daemon", pick: 0.3 },
  { action: "damage", profile: "p2" },
  // One of each kind came before: these fire them again, on other targets.
  { action: "wal-delete", profile: "default" },
  { action: "dash-chat", profile: "p1", count: 3 },
  { action: "fleet-kill", target: "scheduler" },
  { action: "stray-daemon", pick: 0.6 },
  { action: "fleet-kill", target: "dashboard" },
  { action: "stray-daemon", pick: 0.9 },
  // A second chance for the damage, should the first find no page to damage.
  { action: "damage", profile: "p1" },
];

/**
 * Tour events after each of the first drawn ones: at 4 the tour is done
 * after 4 drawn actions (at 2, after 8: with seed 42 a scratch drill of
 * 8 s and a CLI command came before the last fault kind fired).
 */
const TOUR_PER_DRAWN = 4;

export function makeSchedule(rng, totalMs) {
  const events = [];
  let at = 1_000;
  const tour = [...TOUR];
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
    if (action === "fleet-kill") event.target = rng.pick(FLEET_TARGETS);
    if (action === "wal-delete") event.profile = rng.pick(PROFILES);
    if (action === "damage") event.profile = rng.pick(["p1", "p2"]);
    if (action === "acp") {
      event.profile = rng.pick(PROFILES);
      event.turns = rng.int(1, 4);
      event.kill = rng.next() < 0.25;
    }
    if (action === "dash-chat") {
      event.profile = rng.pick(PROFILES);
      event.count = rng.int(1, 5);
    }
    event.pick = rng.next(); // which process, when there are several
    events.push(event);
    // The tour's events interleave with the first drawn ones, TOUR_PER_DRAWN
    // after each (they shift nothing drawn).
    for (let i = 0; i < TOUR_PER_DRAWN && tour.length > 0; i++)
      events.push({ pick: 0.5, ...tour.shift(), at: at + 1 + i });
    at += rng.int(150, 1_500);
  }
  return events;
}
