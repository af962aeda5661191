import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, HearthError, isHearthError } from "../../src/errors.js";
import { publicError } from "../../src/gateway/http-errors.js";
import { NO_SPACE_SITUATIONS } from "../../src/no-space.js";
import { fromSqliteError, isSqliteError, toHearthError } from "../../src/sqlite-errors.js";
import { INVALID_ARG, requireString } from "../../src/store/args.js";
import { codedErrors } from "../../src/store/coded-errors.js";

/** An error shaped like better-sqlite3's SqliteError. */
function sqliteError(code: string, message = "database is locked"): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

describe("HearthError", () => {
  it("is an Error carrying its code, resource, hint and details", () => {
    const err = new HearthError("HEARTH_STORE_HELD", "2 processes hold state.db", {
      resource: "/h/state.db",
      hint: "hearth ps",
      details: { holders: [1, 2] },
    });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("HearthError");
    expect(err.code).toBe("HEARTH_STORE_HELD");
    expect(err.message).toBe("2 processes hold state.db");
    expect(err.cause).toBeUndefined();
    expect(err.sqliteCode).toBeUndefined();
    expect(String(err)).toBe("HearthError: 2 processes hold state.db");
  });

  it("serialises code, message, resource, hint, details and sqliteCode", () => {
    const cause = sqliteError("SQLITE_BUSY");
    const err = new HearthError("HEARTH_BUSY", "state.db stayed locked", {
      resource: "/h/state.db",
      hint: "hearth ps",
      details: { waitedMs: 5000 },
      cause,
    });
    expect(err.cause).toBe(cause);
    expect(err.sqliteCode).toBe("SQLITE_BUSY");
    expect(err.toJSON()).toEqual({
      name: "HearthError",
      code: "HEARTH_BUSY",
      message: "state.db stayed locked",
      resource: "/h/state.db",
      hint: "hearth ps",
      details: { waitedMs: 5000 },
      sqliteCode: "SQLITE_BUSY",
    });
    expect(JSON.parse(JSON.stringify(err))).toEqual(err.toJSON());
  });

  it("leaves out what it does not have", () => {
    const err = new HearthError("HEARTH_USAGE", "bad flag", { cause: new Error("x") });
    expect(err.toJSON()).toEqual({
      name: "HearthError",
      code: "HEARTH_USAGE",
      message: "bad flag",
    });
    expect(Object.keys(err.toJSON())).toEqual(["name", "code", "message"]);
  });

  it("reports a sqliteCode only for SQLITE_* causes", () => {
    const enoent = Object.assign(new Error("no file"), { code: "ENOENT" });
    expect(new HearthError("HEARTH_SQLITE", "m", { cause: enoent }).sqliteCode).toBeUndefined();
    expect(new HearthError("HEARTH_SQLITE", "m", { cause: "SQLITE_BUSY" }).sqliteCode).toBe(
      undefined,
    );
    const ioerr = sqliteError("SQLITE_IOERR_SHORT_READ");
    expect(new HearthError("HEARTH_SQLITE", "m", { cause: ioerr }).sqliteCode).toBe(
      "SQLITE_IOERR_SHORT_READ",
    );
  });

  it("has a description for every code, each code named after itself", () => {
    for (const [code, text] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^HEARTH_[A-Z_]+$/);
      expect(text.length).toBeGreaterThan(10);
    }
  });
});

describe("isHearthError", () => {
  it("checks the class and, when given, the code", () => {
    const err = new HearthError("HEARTH_BUSY", "m");
    expect(isHearthError(err)).toBe(true);
    expect(isHearthError(err, "HEARTH_BUSY")).toBe(true);
    expect(isHearthError(err, "HEARTH_SQLITE")).toBe(false);
    expect(isHearthError(new Error("m"))).toBe(false);
    expect(isHearthError({ code: "HEARTH_BUSY" }, "HEARTH_BUSY")).toBe(false);
  });
});

describe("fromSqliteError", () => {
  it.each([
    "SQLITE_BUSY",
    "SQLITE_BUSY_SNAPSHOT",
    "SQLITE_LOCKED",
  ])("maps %s to HEARTH_BUSY and keeps the cause", (code) => {
    const cause = sqliteError(code);
    const err = fromSqliteError(cause, "/h/state.db");
    expect(err.code).toBe("HEARTH_BUSY");
    expect(err.resource).toBe("/h/state.db");
    expect(err.cause).toBe(cause);
    expect(err.sqliteCode).toBe(code);
    expect(err.message).toContain("/h/state.db");
    expect(err.message).toContain("database is locked");
    expect(err.hint).toContain("hearth ps");
  });

  it.each([
    "SQLITE_CORRUPT",
    "SQLITE_IOERR",
    "SQLITE_CONSTRAINT_UNIQUE",
  ])("maps %s to HEARTH_SQLITE", (code) => {
    const cause = sqliteError(code, "something broke");
    const err = fromSqliteError(cause, "/h/state.db");
    expect(err.code).toBe("HEARTH_SQLITE");
    expect(err.message).toBe("SQLite error on /h/state.db: something broke");
    expect(err.cause).toBe(cause);
    expect(err.sqliteCode).toBe(code);
    expect(err.hint).toContain("hearth doctor");
  });

  it("maps a full disk to HEARTH_NO_SPACE with the free space, keeping SQLite's code", () => {
    const cause = sqliteError("SQLITE_FULL", "database or disk is full");
    const err = fromSqliteError(cause, "/tmp/state.db");
    expect(err.code).toBe("HEARTH_NO_SPACE");
    expect(err.message).toMatch(/^the disk holding \/tmp\/state\.db is full \(\d+ bytes free\)/);
    expect(err.sqliteCode).toBe("SQLITE_FULL");
    expect(err.hint).toContain("writes resume by themselves");
    expect(err.details).toEqual({ situation: "write" });
  });

  it("gives each full-disk situation its own words, and HTTP clients its public text", () => {
    const cause = sqliteError("SQLITE_FULL", "database or disk is full");
    const open = fromSqliteError(cause, "/tmp/state.db", "open");
    expect(open.message).toMatch(/^cannot open \/tmp\/state\.db: the disk holding it is full/);
    expect(open.details).toEqual({ situation: "open" });
    const write = publicError(fromSqliteError(cause, "/tmp/state.db"), 507);
    expect(write.message).toBe(NO_SPACE_SITUATIONS.write);
    expect(write.message).not.toBe(ERROR_CODES.HEARTH_NO_SPACE);
    expect(JSON.stringify(write)).not.toContain("/tmp");
  });

  it("keeps an I/O error HEARTH_SQLITE while its disk has room", () => {
    // The temp directory is on a disk with room: SQLITE_IOERR_SHMSIZE there is not a full disk.
    const err = fromSqliteError(
      sqliteError("SQLITE_IOERR_SHMSIZE", "disk I/O error"),
      `${process.cwd()}/state.db`,
      "open",
    );
    expect(err.code).toBe("HEARTH_SQLITE");
  });

  it("wraps a real better-sqlite3 error with its extended code", () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
      db.exec("INSERT INTO t VALUES (1)");
      let thrown: unknown;
      try {
        db.exec("INSERT INTO t VALUES (1)");
      } catch (e) {
        thrown = e;
      }
      expect(isSqliteError(thrown)).toBe(true);
      const err = fromSqliteError(thrown, ":memory:");
      expect(err.code).toBe("HEARTH_SQLITE");
      expect(err.sqliteCode).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
      expect(err.toJSON()).toMatchObject({ sqliteCode: "SQLITE_CONSTRAINT_PRIMARYKEY" });
    } finally {
      db.close();
    }
  });

  it("passes a HearthError through unchanged", () => {
    const original = new HearthError("HEARTH_STORE_CLOSED", "closed");
    expect(fromSqliteError(original, "/h/state.db")).toBe(original);
  });

  it("wraps non-Error values as HEARTH_SQLITE", () => {
    const err = fromSqliteError("boom", "/h/state.db");
    expect(err.code).toBe("HEARTH_SQLITE");
    expect(err.message).toBe("SQLite error on /h/state.db: boom");
    expect(err.sqliteCode).toBeUndefined();
  });
});

describe("isSqliteError", () => {
  it("is true only for SQLITE_* codes", () => {
    expect(isSqliteError(sqliteError("SQLITE_BUSY"))).toBe(true);
    expect(isSqliteError(Object.assign(new Error("x"), { code: "ENOENT" }))).toBe(false);
    expect(isSqliteError(null)).toBe(false);
    expect(isSqliteError(undefined)).toBe(false);
  });
});

describe("fromSqliteError edge cases", () => {
  it("codes a thrown null as HEARTH_SQLITE", () => {
    expect(fromSqliteError(null, "x").code).toBe("HEARTH_SQLITE");
  });
  it("maps extended busy codes to HEARTH_BUSY", () => {
    for (const code of [
      "SQLITE_BUSY_RECOVERY",
      "SQLITE_BUSY_TIMEOUT",
      "SQLITE_LOCKED_SHAREDCACHE",
    ]) {
      expect(fromSqliteError(Object.assign(new Error("busy"), { code }), "x").code).toBe(
        "HEARTH_BUSY",
      );
    }
  });
});

describe("one error policy", () => {
  it("recognises a HearthError from another copy of the package (a brand, not instanceof alone)", async () => {
    // dist/ and src/ are two separate module instances, as two installed copies would be.
    // A specifier tsc does not resolve: the type check runs beside the build
    // (scripts/checks.mjs), before dist/ exists on a fresh clone.
    const built = "../../dist/errors.js";
    const other = (await import(built)) as typeof import("../../src/errors.js");
    const foreign = new other.HearthError("HEARTH_BUSY", "held");
    expect(foreign).not.toBe(HearthError);
    expect(isHearthError(foreign, "HEARTH_BUSY")).toBe(true);
    expect(foreign instanceof HearthError).toBe(true);
    expect(other.isHearthError(new HearthError("HEARTH_BUSY", "held"))).toBe(true);
    expect(toHearthError(foreign)).toBe(foreign);
    expect(isHearthError(Object.assign(new Error("x"), { code: "HEARTH_BUSY" }))).toBe(false);
  });

  it("labels an unexpected error HEARTH_INTERNAL, never HEARTH_SQLITE", () => {
    const plain = toHearthError(new Error("boom"));
    expect(plain.code).toBe("HEARTH_INTERNAL");
    expect(plain.message).toContain("boom");
    expect(toHearthError(sqliteError("SQLITE_CORRUPT", "malformed")).code).toBe("HEARTH_SQLITE");
    expect(toHearthError(sqliteError("SQLITE_BUSY")).code).toBe("HEARTH_BUSY");
  });
});

describe("the store's misuse code (codedErrors)", () => {
  const api = codedErrors(
    {
      syncType(): never {
        throw new TypeError("id must be a string");
      },
      async asyncRange(): Promise<never> {
        throw new RangeError("limit out of range");
      },
      async nodeCoded(): Promise<never> {
        throw Object.assign(new TypeError("node's own"), { code: "ERR_INVALID_ARG_TYPE" });
      },
      async hearth(): Promise<never> {
        throw new HearthError("HEARTH_SESSION_NOT_FOUND", "no session");
      },
    },
    "/h/state.db",
  );

  it("tags a synchronous TypeError with HEARTH_INVALID_ARG and throws it synchronously, same class", () => {
    let thrown: unknown;
    try {
      api.syncType();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as { code?: unknown }).code).toBe(INVALID_ARG);
    expect((thrown as Error).message).toBe("id must be a string");
  });

  it("tags a rejected RangeError, keeps a code the error already has, passes HearthErrors", async () => {
    const range = await api.asyncRange().catch((e: unknown) => e);
    expect(range).toBeInstanceOf(RangeError);
    expect((range as { code?: unknown }).code).toBe("HEARTH_INVALID_ARG");
    const node = await api.nodeCoded().catch((e: unknown) => e);
    expect((node as { code?: unknown }).code).toBe("ERR_INVALID_ARG_TYPE");
    const hearth = await api.hearth().catch((e: unknown) => e);
    expect(isHearthError(hearth, "HEARTH_SESSION_NOT_FOUND")).toBe(true);
  });

  it("is a registered code, and requireString throws it", () => {
    expect(ERROR_CODES[INVALID_ARG]).toMatch(/TypeError or RangeError/);
    expect(() => requireString(42, "id")).toThrow(TypeError);
    try {
      requireString(42, "id");
    } catch (err) {
      expect((err as Error).message).toBe("id must be a string, got number 42");
      expect((err as { code?: unknown }).code).toBe(INVALID_ARG);
    }
    expect(() => requireString("s", "id")).not.toThrow();
  });
});
