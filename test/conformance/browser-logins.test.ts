import { describe, expect, it } from "vitest";
import { csrfFor } from "../../src/store/browser-logins.js";
import { backends } from "./pg-modules.js";

describe.each(backends)("dashboard browser logins on $name", (backend) => {
  it("finds a login by its cookie id (hash stored), renews it, ends it, and refuses it once its family is revoked", async () => {
    const m = await backend.open();
    const { familyId } = await m.tokens.createPairing({ label: "x", ttlMs: 60_000 });
    const grant = { familyId, profile: "default", scope: "read" as const, allProfiles: false };
    const { id, login } = await m.browserLogins.create(grant, 60_000);
    expect(login).toMatchObject({ ...grant, csrf: csrfFor(id) });
    expect(await m.browserLogins.find(id)).toMatchObject({ ...grant, csrf: csrfFor(id) });
    expect(await m.browserLogins.find(`${id}x`)).toBeUndefined();

    // Idle past its expiry: refused; a renewal moves the expiry on.
    const short = await m.browserLogins.create(grant, 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await m.browserLogins.find(short.id)).toBeUndefined();
    await m.browserLogins.touch(id, 120_000);
    expect((await m.browserLogins.find(id))!.expiresAt).toBeGreaterThan(login.expiresAt);

    const other = await m.browserLogins.create(grant, 60_000);
    await m.browserLogins.end(other.id);
    expect(await m.browserLogins.find(other.id)).toBeUndefined();
    // Ended stays ended: a renewal does not bring it back.
    await m.browserLogins.touch(other.id, 60_000);
    expect(await m.browserLogins.find(other.id)).toBeUndefined();

    expect(await m.tokens.revokeFamily(familyId, "test")).toBe(true);
    expect(await m.browserLogins.find(id)).toBeUndefined();
  });
});
