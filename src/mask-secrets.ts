/**
 * The one place a password is taken out of text before it is shown: a store
 * URL, another process's command line, an error message. Every form a
 * PostgreSQL password can take is masked as `***`:
 *
 * - URL user info: `postgres://user:secret@host` (the last `@` of the
 *   authority ends it, so a password holding `@` is masked whole);
 * - any `…password=value` (any case, URL-escaped or not): the `password=`
 *   query parameter, `PGPASSWORD=…` and `DB_PASSWORD=…` in a command
 *   line, `--password=…`, libpq's `password=…`/`sslpassword=…` keywords in
 *   a conninfo string (quoted values too);
 * - `--password <value>` as two words of a command line;
 * - `known` values (a password hearth resolved itself), wherever they
 *   appear, raw or URL-encoded: a driver's message may quote it.
 *
 * Nothing here parses strictly: it runs on any text, and fails closed by
 * masking more rather than less.
 */

const MASK = "***";

const USERINFO = /([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*):(?:[^\s/?#]*@|[^\s@]*@)/gi;
const KEY_VALUE =
  /((?:[\w.-]|%[0-9a-f]{2})*)(\s*=\s*)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&#;,'"]*)/gi;
const FLAG_WORD = /(--?password)(\s+)(?!-)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|\S+)/gi;

function decodedKey(key: string): string {
  try {
    return decodeURIComponent(key).toLowerCase();
  } catch {
    return key.toLowerCase();
  }
}

/** `text` with every password in it replaced by `***`. */
export function maskSecrets(text: string, known: readonly string[] = []): string {
  let out = text.replace(USERINFO, `$1:${MASK}@`);
  out = out.replace(KEY_VALUE, (whole, key: string, eq: string, value: string) =>
    decodedKey(key).endsWith("password") && value !== "" ? `${key}${eq}${MASK}` : whole,
  );
  out = out.replace(FLAG_WORD, `$1$2${MASK}`);
  for (const secret of known) {
    if (secret.length < 3) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)]))
      out = out.split(form).join(MASK);
  }
  return out;
}

/** A command line (argv) with its passwords masked, word by word and across words. */
export function maskArgv(argv: readonly string[]): string[] {
  const masked: string[] = [];
  for (const [i, word] of argv.entries()) {
    const previous = argv[i - 1];
    masked.push(
      previous !== undefined && /^--?password$/i.test(previous) && !word.startsWith("-")
        ? MASK
        : maskSecrets(word),
    );
  }
  return masked;
}
