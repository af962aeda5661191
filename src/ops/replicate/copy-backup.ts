import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { loadConfig } from "../../config/load.js";
import { HearthError } from "../../errors.js";
import { openTarget, sha256, targetConfig } from "./target.js";

export interface CopiedBackup {
  target: string;
  key: string;
  bytes: number;
  sha256: string;
}

/**
 * `hearth backup --to <target>`: a backup file just written (and verified)
 * copied to a backup target as `<profile>/backups/<its name>`, then read
 * back and compared by SHA-256 (HEARTH_REPLICA_CORRUPT when the copy
 * differs). The local backup stays where it is.
 */
export async function copyBackupToTarget(options: {
  home: string;
  profile: string;
  file: string;
  to: string;
}): Promise<CopiedBackup> {
  const config = loadConfig({ home: options.home });
  const target = await openTarget(targetConfig(config, options.to), options.home);
  const data = await readFile(options.file);
  const sum = sha256(data);
  const key = `${options.profile}/backups/${basename(options.file)}`;
  await target.put(key, data);
  if (sha256(await target.get(key)) !== sum)
    throw new HearthError(
      "HEARTH_REPLICA_CORRUPT",
      `the copy of ${options.file} on backup target ${target.name} does not read back the same`,
      { resource: key, hint: "check the target's storage; the local backup is intact" },
    );
  return { target: target.name, key, bytes: data.length, sha256: sum };
}
