import { lstatSync, realpathSync, type Stats, statSync } from "node:fs";
import { dirname, join, parse, sep } from "node:path";

/**
 * Files hearth trusts like code it runs (config.json, a tool module): owned
 * by the running user or root, and not writable by group or others (S1).
 * The reason a file fails that rule, or undefined when it passes.
 */
export function untrustedReason(
  stats: { uid: number; mode: number },
  uid = process.getuid?.(),
): string | undefined {
  if (uid !== undefined && stats.uid !== uid && stats.uid !== 0)
    return `it is owned by uid ${stats.uid}, not by this user (uid ${uid}) or root`;
  if ((stats.mode & 0o022) !== 0)
    return `it is writable by ${(stats.mode & 0o020) !== 0 ? "its group" : "others"} (mode ${modeOf(stats)})`;
  return undefined;
}

/** The permission bits as `ls` prints them in octal, e.g. `0644`. */
export function modeOf(stats: { mode: number }): string {
  return (stats.mode & 0o7777).toString(8).padStart(4, "0");
}

/** One path that failed the rule: which one, its owner and mode, and why. */
export interface UntrustedPath {
  path: string;
  kind: "file" | "directory" | "symbolic link";
  uid: number;
  mode: string;
  why: string;
}

/**
 * Judge code before it is loaded: `path`, the real file it resolves to, and
 * every directory above that file must pass the rule, so nobody but this
 * user and root can change what runs. A symbolic link on the way is
 * followed, and must itself be owned by this user or root (its own mode
 * means nothing), as must the directory holding it. A directory writable by
 * group or others is accepted only with the sticky bit and a trusted owner (as /tmp):
 * there, others can add names but not rename or replace this user's.
 * Returns the real path (load that one, not `path`), or the first path that
 * fails. Throws what realpath throws (ENOENT, ELOOP, EACCES).
 */
export function judgeCodePath(path: string): { real: string } | { refused: UntrustedPath } {
  const judged = new Set<string>();
  const refuse = (p: string, kind: UntrustedPath["kind"], s: Stats, why: string) => ({
    refused: { path: p, kind, uid: s.uid, mode: modeOf(s), why },
  });
  // The directories of the real path, from the root down (the real chain has no links).
  const judgeDirs = (realDir: string): { refused: UntrustedPath } | undefined => {
    for (const dir of ancestors(realDir)) {
      if (judged.has(dir)) continue;
      judged.add(dir);
      const s = statSync(dir);
      const sticky = (s.mode & 0o1000) !== 0;
      const why = untrustedReason(sticky ? { uid: s.uid, mode: s.mode & ~0o022 } : s);
      if (why !== undefined) return refuse(dir, "directory", s, why);
    }
    return undefined;
  };
  // Each symbolic link met on the way: its owner, and the directory that holds it.
  for (const prefix of prefixes(path)) {
    const s = lstatSync(prefix);
    if (!s.isSymbolicLink()) continue;
    const why = untrustedReason({ uid: s.uid, mode: 0 });
    if (why !== undefined) return refuse(prefix, "symbolic link", s, why);
    const holder = judgeDirs(realpathSync(dirname(prefix)));
    if (holder) return holder;
  }
  const real = realpathSync(path);
  const s = statSync(real);
  if (!s.isFile()) return refuse(real, "file", s, "it is not a regular file");
  const why = untrustedReason(s);
  if (why !== undefined) return refuse(real, "file", s, why);
  return judgeDirs(dirname(real)) ?? { real };
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c`. */
function ancestors(dir: string): string[] {
  const { root } = parse(dir);
  const parts = dir.slice(root.length).split(sep).filter(Boolean);
  return [root, ...parts.map((_, i) => join(root, ...parts.slice(0, i + 1)))];
}

/** Every path on the way to `path`, itself included: `/a/b` → `/a`, `/a/b`. */
function prefixes(path: string): string[] {
  return ancestors(path).slice(1);
}
