import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import * as fsx from "fs-native-extensions";
import { HearthError } from "../errors.js";
import { ensurePrivateDir } from "../files/create.js";
import { configPath } from "./paths.js";
import type { HearthConfig } from "./schema.js";
import { validateConfig } from "./validate.js";

/**
 * Change `config.json` safely: one editor at a time (an OFD lock on
 * `.config.lock` in the home), the file's own JSON changed by `mutate`,
 * validated with the schema (an invalid result changes nothing), then
 * written under a temporary name, fsync'd and renamed into place (0600).
 * Returns the validated file layer.
 */
export async function editConfig(
  home: string,
  mutate: (raw: Record<string, unknown>) => void,
): Promise<HearthConfig> {
  ensurePrivateDir(home);
  const lockFd = openSync(
    join(home, ".config.lock"),
    constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await fsx.waitForLock(lockFd, 0, 1);
    const file = configPath(home);
    let raw: Record<string, unknown> = {};
    try {
      raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        throw new HearthError(
          "HEARTH_CONFIG_UNREADABLE",
          `cannot read ${file}: ${(err as Error).message}`,
          {
            resource: file,
            cause: err,
            hint: `fix the JSON in ${file} first`,
          },
        );
    }
    mutate(raw);
    const valid = validateConfig(raw, file);
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600, flag: "wx" });
      const fd = openSync(tmp, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    const dir = openSync(home, "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    return valid;
  } finally {
    closeSync(lockFd); // drops the OFD lock
  }
}
