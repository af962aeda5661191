// Lets `npm start` and `npm test` work on a fresh clone: install exactly
// what package-lock.json pins when the dependencies are not there yet.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const needed = ["better-sqlite3", "typescript", "vitest"];
if (
  needed.some(
    (name) => !existsSync(new URL(`../node_modules/${name}/package.json`, import.meta.url)),
  )
) {
  console.error("hearth: installing dependencies from package-lock.json (npm ci)…");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
