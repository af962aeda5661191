import type { Command } from "commander";

export interface GlobalOptions {
  home?: string;
  profile?: string;
  json: boolean;
  /** How long work shows progress: a bar on a terminal (auto), JSON lines on stderr, or nothing. */
  progress: ProgressMode;
}

export type ProgressMode = "auto" | "json" | "none";

/** The options every command shares, read from the root program. */
export function globals(command: Command): GlobalOptions {
  let root = command;
  while (root.parent) root = root.parent;
  const o = root.opts<{ home?: string; profile?: string; json?: boolean; progress?: string }>();
  return {
    ...(o.home === undefined ? {} : { home: o.home }),
    ...(o.profile === undefined ? {} : { profile: o.profile }),
    json: o.json === true,
    progress: (o.progress ?? "auto") as ProgressMode,
  };
}
