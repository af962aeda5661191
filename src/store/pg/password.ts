/**
 * Where a PostgreSQL store's password comes from, so that it never has to
 * be on a command line (where `ps` and /proc show it to every user): the
 * URL itself (config.json, 0600), else `PGPASSWORD`, else
 * `store.passwordFile`, else whatever the caller asks for (the CLI's
 * prompt on a terminal). The password found is put into the URL hearth
 * uses inside the process; everything that prints a URL masks it.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { HearthError } from "../../errors.js";
import { urlPasswords } from "./url.js";

export interface PasswordSources {
  /** store.passwordFile: relative paths are under the home. */
  passwordFile?: string | undefined;
  home: string;
  env: NodeJS.ProcessEnv;
}

/** True when the URL carries a password (user info or a `password=` parameter). */
export function hasPassword(url: string): boolean {
  return urlPasswords(url).length > 0;
}

/** `url` with `password` as its user-info password (its `password=` parameters dropped). */
export function withPassword(url: string, password: string): string {
  const u = new URL(url);
  for (const key of [...u.searchParams.keys()])
    if (key.toLowerCase() === "password") u.searchParams.delete(key);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/**
 * The store URL with its password filled in from PGPASSWORD or the
 * password file when it carries none; unchanged when neither gives one.
 * A password file that is not this user's own private regular file is
 * refused (HEARTH_PASSWORD_FILE_UNSAFE), never read.
 */
export function storeUrlWithPassword(url: string, sources: PasswordSources): string {
  if (hasPassword(url)) return url;
  const fromEnv = sources.env.PGPASSWORD;
  if (fromEnv) return withPassword(url, fromEnv);
  if (sources.passwordFile === undefined) return url;
  const file = isAbsolute(sources.passwordFile)
    ? sources.passwordFile
    : join(sources.home, sources.passwordFile);
  return withPassword(url, readPasswordFile(file));
}

/** The first line of `file`, which must be a regular file of this user's, unreadable by others. */
export function readPasswordFile(file: string): string {
  const password = readPrivateFile(file, "password").split(/\r?\n/)[0] ?? "";
  if (password === "") throw unsafeFile(file, "password", "its first line is empty");
  return password;
}

const unsafeFile = (file: string, what: string, why: string, cause?: unknown) =>
  new HearthError("HEARTH_PASSWORD_FILE_UNSAFE", `refusing ${what} file ${file}: ${why}`, {
    resource: file,
    cause,
    hint: `write the ${what} alone in ${file}, then: chown $(id -u) ${file} && chmod 600 ${file}`,
  });

/**
 * The text of a secret's file (a password, S3 credentials), which must be a
 * regular file of this user's, unreadable by others: anything else is
 * refused (HEARTH_PASSWORD_FILE_UNSAFE), never read.
 */
export function readPrivateFile(file: string, what: string): string {
  const refuse = (why: string, cause?: unknown) => unsafeFile(file, what, why, cause);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw refuse(`it cannot be opened (${(err as NodeJS.ErrnoException).code ?? err})`, err);
  }
  try {
    // The file that was opened is the one judged and read (no swap in between).
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile()) throw refuse("it is not a regular file");
    if (uid !== undefined && st.uid !== uid)
      throw refuse(`it is owned by uid ${st.uid}, not by this user (uid ${uid})`);
    if ((st.mode & 0o077) !== 0)
      throw refuse(
        `its group or others may read or write it (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")})`,
      );
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
