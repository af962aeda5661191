// The Chromium the benchmark drives: the one the browser tests use
// (test/helpers/chromium.ts), never a download: HEARTH_CHROMIUM=<path>;
// else Debian's /usr/bin/chromium; else the tests' unpacked copy of the
// @sparticuz/chromium devDependency; else that package unpacked now.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export async function chromiumPath() {
  if (process.env.HEARTH_CHROMIUM) return process.env.HEARTH_CHROMIUM;
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  const require = createRequire(import.meta.url);
  const pkg = join(dirname(require.resolve("@sparticuz/chromium")), "..", "package.json");
  const { version } = JSON.parse(readFileSync(pkg, "utf8"));
  const unpacked = join(
    tmpdir(),
    `hearth-sparticuz-chromium-${version}-${process.getuid?.() ?? 0}`,
  );
  if (existsSync(join(unpacked, "complete"))) return join(unpacked, "chromium");
  const { default: chromium } = await import("@sparticuz/chromium");
  return chromium.executablePath();
}
