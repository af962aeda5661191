import { describe, expect, it } from "vitest";
import { cookieName } from "../../src/dashboard/daemon.js";

describe("the dashboard's login cookie name", () => {
  it("is per port on SQLite, one name on every host of a shared (PostgreSQL) store, and configurable", () => {
    expect(cookieName(undefined, false, 8788)).toBe("hearth_dashboard_8788");
    expect(cookieName(undefined, false, 0)).toMatch(/^hearth_dashboard_[0-9a-f]{8}$/);
    expect(cookieName(undefined, true, 8788)).toBe("hearth_dashboard");
    expect(cookieName(undefined, true, 9999)).toBe("hearth_dashboard");
    expect(cookieName("acme_dash", true, 8788)).toBe("acme_dash");
    expect(cookieName("acme_dash", false, 8788)).toBe("acme_dash");
  });
});
