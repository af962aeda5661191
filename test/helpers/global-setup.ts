import { fileURLToPath } from "node:url";
import { freshDist } from "./build-dist.js";

// vitest globalSetup: once per run, before any test file. dist/ is rebuilt
// when a source is newer (build-dist.ts), and no other run in this checkout
// rebuilds it until this run's teardown.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export default async function setup(): Promise<() => void> {
  const dist = await freshDist(ROOT);
  return () => dist.release();
}
