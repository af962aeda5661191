import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { nodeCrypto } from "../builtins.js";
import { backupsDir } from "../config/paths.js";
import { ensurePrivateDir } from "../files/create.js";
import { lstatOrNull, SIDECAR_SUFFIXES } from "../files/inspect.js";
import { fsyncFile } from "./publish.js";
import { assertSpaceFor } from "./space.js";

export interface ForensicCopy {
  /** The published directory. */
  dir: string;
  /** sha256 over every file's name, size and bytes. */
  identity: string;
  /** True when an identical copy already existed and was reused. */
  reused: boolean;
  files: { name: string; bytes: number }[];
}

export function forensicRoot(home: string): string {
  return join(backupsDir(home), "forensic");
}

/**
 * A complete copy of a store about to be mutated or replaced (M2): the
 * database and every sidecar present (-wal, -shm, -journal). Staged under a
 * dot-name that no backup pattern matches, sidecars first and the main file
 * last, each fsync'd, with a manifest; published by one directory rename.
 * Deduplicated by full content identity (a hash of every byte, never size
 * or mtime); only the newest `keep` copies per profile are kept; admitted
 * only when free space covers every file (fails closed). Throws when the
 * copy cannot be made: no copy, no mutation.
 */
export function takeForensicCopy(
  home: string,
  profile: string,
  dbPath: string,
  options: { keep: number; reason: string },
): ForensicCopy {
  const present = [...SIDECAR_SUFFIXES, ""]
    .map((suffix) => ({ path: dbPath + suffix, stats: lstatOrNull(dbPath + suffix) }))
    .filter((f) => f.stats?.isFile());
  const root = forensicRoot(home);
  ensurePrivateDir(backupsDir(home));
  ensurePrivateDir(root);
  const total = present.reduce((sum, f) => sum + (f.stats?.size ?? 0), 0);
  assertSpaceFor(root, total, `take a forensic copy of ${dbPath}`);

  const hash = nodeCrypto().createHash("sha256");
  for (const f of present) {
    const bytes = readFileSync(f.path);
    hash.update(`${basename(f.path)}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  const identity = hash.digest("hex");
  const existing = listForensic(home, profile).find((c) => c.identity === identity);
  if (existing) return { ...existing, reused: true };

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const staging = join(root, `.staging-${profile}-${process.pid}-${Date.now()}`);
  const published = join(root, `${profile}-${stamp}`);
  mkdirSync(staging, { mode: 0o700 });
  try {
    const files: { name: string; bytes: number }[] = [];
    // Sidecars first, the main file last.
    for (const f of present) {
      const target = join(staging, basename(f.path));
      copyFileSync(f.path, target);
      fsyncFile(target);
      files.push({ name: basename(f.path), bytes: f.stats?.size ?? 0 });
    }
    const manifest = {
      profile,
      dbPath,
      reason: options.reason,
      createdAt: new Date().toISOString(),
      identity,
      files,
    };
    writeFileSync(join(staging, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`, {
      mode: 0o600,
    });
    fsyncFile(join(staging, "manifest.json"));
    fsyncFile(staging);
    renameSync(staging, published);
    fsyncFile(root);
    for (const old of listForensic(home, profile).slice(options.keep))
      rmSync(old.dir, { recursive: true, force: true });
    return { dir: published, identity, reused: false, files };
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

/** Published forensic copies of a profile, newest first (staging debris is never listed). */
export function listForensic(home: string, profile: string): Omit<ForensicCopy, "reused">[] {
  const root = forensicRoot(home);
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(`${profile}-`) && !n.startsWith("."));
  } catch {
    return [];
  }
  const copies: Omit<ForensicCopy, "reused">[] = [];
  for (const name of names.sort().reverse()) {
    try {
      const manifest = JSON.parse(readFileSync(join(root, name, "manifest.json"), "utf8")) as {
        profile: string;
        identity: string;
        files: { name: string; bytes: number }[];
      };
      if (manifest.profile === profile)
        copies.push({ dir: join(root, name), identity: manifest.identity, files: manifest.files });
    } catch {
      // not a complete copy
    }
  }
  return copies;
}
