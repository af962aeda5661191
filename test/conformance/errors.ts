import { expect } from "vitest";

/** The rejection of `promise` (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: string };
  }
  expect.unreachable("expected a rejection");
  throw new Error("unreachable");
}
