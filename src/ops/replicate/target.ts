import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { HearthConfig } from "../../config/schema.js";
import type { TargetConfig } from "../../config/targets.js";
import { HearthError } from "../../errors.js";

/**
 * Where copies go off the store's disk: a flat key space of immutable
 * objects (written whole or not at all, never changed), listed by prefix.
 * Every object's name carries the SHA-256 of its content, checked on every
 * read back (src/ops/replicate/layout.ts).
 */
export interface Target {
  readonly name: string;
  /** Where, for messages (no credentials). */
  readonly where: string;
  put(key: string, data: Buffer): Promise<void>;
  /**
   * Copy `file` towards the target, streamed (never whole in memory) and
   * hashed as it is read, under no listed name yet; `publish` then puts it
   * under a key that may carry its SHA-256 (a snapshot's), `discard` drops
   * it. The copy is what was read: a file that changes meanwhile is not
   * read twice.
   */
  stage(file: string): Promise<Staged>;
  get(key: string): Promise<Buffer>;
  /** Keys under `prefix` (a folder: ends with "/"), in no particular order. */
  list(prefix: string): Promise<string[]>;
  remove(keys: string[]): Promise<void>;
}

export interface Staged {
  sha: string;
  bytes: number;
  publish(key: string): Promise<void>;
  discard(): Promise<void>;
}

export const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** The backup.targets entry `name`, or HEARTH_TARGET_UNKNOWN naming the configured ones. */
export function targetConfig(config: HearthConfig, name: string): TargetConfig {
  const found = config.backup.targets.find((t) => t.name === name);
  if (found) return found;
  const names = config.backup.targets.map((t) => t.name);
  throw new HearthError(
    "HEARTH_TARGET_UNKNOWN",
    `no backup target is named ${JSON.stringify(name)}`,
    {
      resource: name,
      hint: names.length
        ? `configured targets: ${names.join(", ")}`
        : "add one to backup.targets in config.json (docs/operations.md#copies-off-the-host)",
    },
  );
}

/** A Target for a backup.targets entry; `home` resolves a relative credentialsFile. */
export async function openTarget(t: TargetConfig, home: string): Promise<Target> {
  if (t.type === "dir") return new (await import("./dir-target.js")).DirTarget(t.name, t.path!);
  const file =
    t.credentialsFile === undefined
      ? undefined
      : isAbsolute(t.credentialsFile)
        ? t.credentialsFile
        : join(home, t.credentialsFile);
  return new (await import("./s3-target.js")).S3Target(t, file);
}

/** A target's failure as a HearthError (HEARTH_TARGET_FAILED), its cause kept. */
export function targetFailed(target: Target, what: string, err: unknown): HearthError {
  if (err instanceof HearthError) return err;
  const e = err as NodeJS.ErrnoException & { name?: string };
  return new HearthError(
    "HEARTH_TARGET_FAILED",
    `backup target ${target.name} (${target.where}): ${what} failed: ${e.code ?? e.name ?? ""} ${e.message}`.trim(),
    {
      resource: target.where,
      cause: err,
      hint: "check that the target is reachable, writable and has space; replication catches up once it is",
    },
  );
}

/** `from` copied to the new file `to` (created 0600, fsynced), hashed as it streams: its SHA-256 and size. */
export async function copyHashed(
  from: string,
  to: string,
): Promise<{ sha: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(
    createReadStream(from, { highWaterMark: 1 << 20 }),
    tap,
    createWriteStream(to, { flags: "wx", mode: 0o600 }),
  );
  const file = await open(to, "r");
  try {
    await file.sync();
  } finally {
    await file.close();
  }
  return { sha: hash.digest("hex"), bytes };
}
