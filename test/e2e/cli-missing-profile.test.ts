import { describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { runCli } from "../helpers/cli.js";
import { tempHome } from "../helpers/home.js";
import { snapshot } from "../helpers/snapshot.js";

// Maintenance names a store that must already exist. Aimed at a profile
// with none (a mistyped --profile), it is HEARTH_STORE_NOT_FOUND (exit 1)
// and creates nothing: a dry run least of all. The clean-clone CI run's
// fuzzer met `hearth --profile work sessions delete-empty --dry-run`
// creating profile work's store and reporting success.

const ACTS = [
  ["sessions", "prune", "--dry-run"],
  ["sessions", "prune", "--yes"],
  ["sessions", "optimize", "--dry-run"],
  ["sessions", "optimize"],
  ["sessions", "delete-empty", "--dry-run"],
  ["sessions", "delete-empty"],
  ["token", "revoke", "some-family"],
];

describe("maintenance on a profile that has no store", () => {
  for (const act of ACTS) {
    it(`hearth --profile wrok ${act.join(" ")}: HEARTH_STORE_NOT_FOUND, nothing created`, async () => {
      const home = tempHome();
      await (await openStore({ home, profile: "work" })).close();
      const before = snapshot(home, { ignore: ["run"] });
      const r = await runCli(["--json", "--profile", "wrok", ...act], { home });
      expect(r.code, r.stderr).toBe(1);
      const { error } = JSON.parse(r.stderr);
      expect(error.code).toBe("HEARTH_STORE_NOT_FOUND");
      expect(error.hint).toMatch(/check the profile's name/);
      expect(snapshot(home, { ignore: ["run"] })).toEqual(before);
    });
  }
});
