import type { Command } from "commander";

export interface GlobalOptions {
  home?: string;
  profile?: string;
  json: boolean;
}

/** The options every command shares, read from the root program. */
export function globals(command: Command): GlobalOptions {
  let root = command;
  while (root.parent) root = root.parent;
  const o = root.opts<{ home?: string; profile?: string; json?: boolean }>();
  return {
    ...(o.home === undefined ? {} : { home: o.home }),
    ...(o.profile === undefined ? {} : { profile: o.profile }),
    json: o.json === true,
  };
}
