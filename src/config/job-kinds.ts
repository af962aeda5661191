/** Jobs the worker runs through ops/; "command" runs a user command. (Its own module: the CLI lists them without loading the config schema.) */
export const JOB_KINDS = [
  "backup",
  "optimize",
  "prune",
  "delete-empty",
  "reap-idle",
  "doctor",
  "command",
] as const;
export type JobKind = (typeof JOB_KINDS)[number];
