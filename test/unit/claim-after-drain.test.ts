import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HearthError } from "../../src/errors.js";
import { claimAfterDrain, type GatewayLock } from "../../src/process/gateway-lock.js";
import { tempHome } from "../helpers/home.js";

const running = () => new HearthError("HEARTH_GATEWAY_RUNNING", "another gateway already serves");
const lock = { profile: "default" } as GatewayLock;

/** A sleep that moves the clock instead of waiting. */
const clockSleep = async (ms: number) => {
  vi.setSystemTime(Date.now() + ms);
};

afterEach(() => {
  vi.useRealTimers();
});

describe("claimAfterDrain: a start beside a gateway that is letting its lock go", () => {
  it("asks again while the holder's record is gone but its lock still held (the last step of its release), then claims", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    // No record at all: the holder removed it and has not released the kernel lock yet.
    const path = join(tempHome(), "run", "gateway.json");
    let attempts = 0;
    const claim = () => {
      attempts++;
      if (attempts < 5) throw running();
      return lock;
    };
    await expect(claimAfterDrain(claim, path, clockSleep)).resolves.toBe(lock);
    expect(attempts).toBe(5);
  });

  it("refuses a lock held without a record for longer than that instant", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const path = join(tempHome(), "run", "gateway.json");
    let attempts = 0;
    const claim = (): GatewayLock => {
      attempts++;
      throw running();
    };
    await expect(claimAfterDrain(claim, path, clockSleep)).rejects.toMatchObject({
      code: "HEARTH_GATEWAY_RUNNING",
    });
    // Asked again for about 2 s of (moved) clock, 100 ms apart, then refused.
    expect(attempts).toBeGreaterThan(15);
    expect(attempts).toBeLessThan(30);
  });
});
