import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

// The Chromium the browser tests drive, never a test tool's browser download:
// HEARTH_CHROMIUM=<path>         that binary;
// HEARTH_TEST_CHROMIUM=system    Debian's /usr/bin/chromium;
// HEARTH_TEST_CHROMIUM=npm       @sparticuz/chromium's headless shell, a
//                                devDependency from the npm registry;
// otherwise                      /usr/bin/chromium when present, else npm's.
// The npm package holds Chromium brotli-compressed; executablePath() unpacks
// it into the temp dir. Here it unpacks into a fresh directory renamed into
// place at the end, so two runs never launch a half-written binary, and
// later runs reuse it (one directory per package version).

export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

async function npmChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  // Its exports map hides package.json: found from the entry (build/index.js).
  const pkg = join(dirname(require.resolve("@sparticuz/chromium")), "..", "package.json");
  const { version } = JSON.parse(readFileSync(pkg, "utf8")) as { version: string };
  const home = join(tmpdir(), `hearth-sparticuz-chromium-${version}-${process.getuid?.() ?? 0}`);
  const binary = join(home, "chromium");
  if (existsSync(join(home, "complete"))) return binary;
  const staging = mkdtempSync(`${home}.tmp-`);
  const saved = process.env.TMPDIR;
  try {
    // The package unpacks into os.tmpdir(), which reads TMPDIR.
    process.env.TMPDIR = staging;
    const { default: chromium } = await import("@sparticuz/chromium");
    const unpacked = await chromium.executablePath();
    if (dirname(unpacked) !== staging)
      throw new Error(`@sparticuz/chromium unpacked into ${unpacked}, expected ${staging}`);
    writeFileSync(join(staging, "complete"), "");
    try {
      renameSync(staging, home);
    } catch (err) {
      // Another run put its copy in place first (ENOTEMPTY/EEXIST): use that one.
      if (!existsSync(join(home, "complete"))) throw err;
    }
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** The path of the Chromium binary to launch (see the top of this file). */
export async function chromiumPath(): Promise<string> {
  if (process.env.HEARTH_CHROMIUM) return process.env.HEARTH_CHROMIUM;
  const choice = process.env.HEARTH_TEST_CHROMIUM;
  if (choice !== undefined && choice !== "system" && choice !== "npm")
    throw new Error(`HEARTH_TEST_CHROMIUM=${choice}: expected system or npm (or unset)`);
  if (choice === "system" || (choice === undefined && existsSync(SYSTEM_CHROMIUM))) {
    if (!existsSync(SYSTEM_CHROMIUM))
      throw new Error(`${SYSTEM_CHROMIUM} is missing (HEARTH_TEST_CHROMIUM=system)`);
    return SYSTEM_CHROMIUM;
  }
  return npmChromium();
}
