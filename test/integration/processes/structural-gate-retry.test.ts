import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { isHearthError } from "../../../src/errors.js";
import { claimStructural, structuralHooks } from "../../../src/process/structural.js";
import { inodeLocks } from "../../../src/store/sqlite/store.js";
import { openSqliteStore, tempHome } from "../../helpers/home.js";
import { killAndWaitForExit, spawnNode } from "../../helpers/process.js";

const GATE_HOLDER = fileURLToPath(new URL("../../fixtures/bare-gate-holder.mjs", import.meta.url));
const READER_GATE_HOLDER = fileURLToPath(
  new URL("../../fixtures/gate-holder.mjs", import.meta.url),
);

afterEach(() => {
  structuralHooks.gateRefused = undefined;
});

// A 20-minute torture run refused a worker's DDL with "another process holds
// the structural gate", naming nobody: the gate's holder (a momentary writer)
// let go between the refused gate and the census that looks for it. The hook
// puts that instant where the test wants it.
it("a gate whose holder let go before it could be named is asked again, and taken", async () => {
  const store = await openSqliteStore({ home: tempHome() });
  const holder = spawnNode([GATE_HOLDER, store.path]);
  await holder.line((l) => l === "ready", "ready");
  let refusals = 0;
  structuralHooks.gateRefused = () => {
    if (refusals++ === 0) killAndWaitForExit(holder.pid);
  };
  const locks = store[inodeLocks];
  claimStructural(locks, "test ddl");
  locks.endStructural();
  expect(refusals).toBe(1);
  await store.close();
});

it("a gate holder that stays is named in the refusal", async () => {
  const store = await openSqliteStore({ home: tempHome() });
  const holder = spawnNode([GATE_HOLDER, store.path]);
  await holder.line((l) => l === "ready", "ready");
  let err: unknown;
  try {
    claimStructural(store[inodeLocks], "test ddl");
  } catch (e) {
    err = e;
  }
  expect(isHearthError(err, "HEARTH_STORE_HELD")).toBe(true);
  expect(String((err as Error).message)).toContain(String(holder.pid));
  await store.close();
});

it("a gate held by a process that presents only as a reader is refused naming the processes present", async () => {
  const store = await openSqliteStore({ home: tempHome() });
  const holder = spawnNode([READER_GATE_HOLDER, store.path]);
  await holder.line((l) => l === "ready", "ready");
  let err: unknown;
  try {
    claimStructural(store[inodeLocks], "test ddl");
  } catch (e) {
    err = e;
  }
  expect(isHearthError(err, "HEARTH_STORE_HELD")).toBe(true);
  expect(String((err as Error).message)).toContain("structural gate");
  expect(String((err as Error).message)).toContain(`pid ${holder.pid}`);
  await store.close();
});
