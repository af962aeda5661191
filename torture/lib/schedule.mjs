// The schedule of a run, drawn whole from the seed before anything starts:
// the same seed gives the same actions, parameters and instants.

const WEIGHTS = {
  worker: 6,
  cli: 6,
  kill: 3,
  failpoint: 1,
  stray: 2,
  stop: 2,
};
const CLI = ["doctor", "ps", "backup", "optimize-window", "delete-empty", "export"];
const TARGETS = ["gateway", "gateway", "dashboard", "worker"];

export function makeSchedule(rng, totalMs) {
  const events = [];
  let at = 1_000;
  while (at < totalMs - 2_000) {
    const action = rng.weighted(WEIGHTS);
    const event = { at, action };
    if (action === "worker") event.messages = rng.int(1, 25);
    if (action === "cli") event.command = rng.pick(CLI);
    if (action === "kill") event.target = rng.pick(TARGETS);
    if (action === "failpoint") event.k = rng.int(1, 40);
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
