/**
 * Shared set-up for the store-API integration tests: every test gets its own
 * real home directory and real SQLite files; nothing is mocked.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import {
  HearthError,
  type HearthErrorCode,
  type OpenStoreOptions,
  openStore,
  type SqliteStore,
  sqliteOnly,
} from "../../../src/index.js";

/** Tracks the homes and stores a test opened, so afterEach can close and remove them all. */
export class TestHomes {
  private readonly dirs: string[] = [];
  private readonly stores: SqliteStore[] = [];

  /** A fresh, empty home directory (0700, from mkdtemp). */
  makeHome(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hearth-test-"));
    this.dirs.push(dir);
    return dir;
  }

  /**
   * openStore() on `home`, with an empty environment so HEARTH_* variables of
   * the machine running the tests cannot change the configuration.
   */
  async open(home: string, options: Omit<OpenStoreOptions, "home"> = {}): Promise<SqliteStore> {
    const store = sqliteOnly(await openStore({ env: {}, ...options, home }), "this test");
    this.stores.push(store);
    return store;
  }

  /** Close every store (newest first) and remove every home. */
  async cleanup(): Promise<void> {
    for (const store of this.stores.splice(0).reverse()) await store.close();
    for (const dir of this.dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Await `promise`, expect it to reject with a HearthError of `code`, and return the error. */
export async function expectHearthError(
  promise: Promise<unknown>,
  code: HearthErrorCode,
): Promise<HearthError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) {
    throw new Error(
      `expected ${code}, but the call resolved with ${JSON.stringify(outcome.value)}`,
    );
  }
  expect(outcome.error).toBeInstanceOf(HearthError);
  expect((outcome.error as HearthError).code).toBe(code);
  return outcome.error as HearthError;
}

/** Consume an async generator (export) into an array of chunks. */
export async function drain(chunks: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

/** Wait long enough for Date.now() to move on, so activity timestamps differ. */
export function tick(ms = 3): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
