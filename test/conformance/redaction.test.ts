// Redaction of secrets (docs/security.md#redaction) on every backend: with
// redaction on, the text is replaced before it is committed, so the rows in
// the database itself (read here with the engine's own client, not the
// store) never hold the secret; off by default; a bad pattern is a coded
// configuration error that opens nothing.
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/index.js";
import { type Backend, backends, expectHearthError, TestHomes } from "./fixture.js";

const OPENAI = `sk-proj-${"a1B2".repeat(8)}`;
const GITHUB = `ghp_${"x9".repeat(18)}`;
const AWS = "AKIAIOSFODNN7EXAMPLE";
const SLACK = "xoxb-1234567890-abcdefghij";
const BEARER = "eyJhbGciOiJIUzI1NiJ9.payload.sig";

/** Every content and tool-calls text of the session's rows, as the database holds them. */
async function rawRows(backend: Backend, store: Store, sessionId: string): Promise<string[]> {
  const select = "SELECT content, tool_calls FROM messages WHERE session_id = ";
  if (backend.name === "sqlite") {
    const db = new Database(store.path, { readonly: true });
    try {
      const rows = db.prepare(`${select}? ORDER BY id`).all(sessionId) as Record<string, string>[];
      return rows.flatMap((r) => [r.content!, r.tool_calls ?? ""]);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: (await backend.place(store.home)).url });
  await client.connect();
  try {
    const { rows } = await client.query(`${select}$1 ORDER BY id`, [sessionId]);
    return rows.flatMap((r) => [r.content as string, (r.tool_calls as string | null) ?? ""]);
  } finally {
    await client.end();
  }
}

describe.each(backends)("redaction on $name", (backend) => {
  const homes = new TestHomes(backend);

  afterEach(async () => {
    await homes.cleanup();
  });

  const secrets = `keys: ${OPENAI} ${GITHUB} ${AWS} ${SLACK} Authorization: Bearer ${BEARER} pw=hunter2-XYZ`;

  it("replaces built-in and configured patterns before the rows are committed", async () => {
    const store = await homes.open(homes.makeHome(), {
      config: {
        redaction: { enabled: true, patterns: [{ name: "pw", regex: "hunter2-[A-Z]+" }] },
      },
    });
    const s = await store.sessions.create();
    const appended = await store.messages.append(s.id, { role: "user", content: secrets });
    await store.messages.appendBatch(s.id, [
      {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c1", function: { name: "f", arguments: `{"key":"${OPENAI}"}` } }],
      },
      { role: "tool", toolCallId: "c1", content: { result: [`token ${GITHUB}`] } },
    ]);
    const expected =
      "keys: [redacted:openai] [redacted:github] [redacted:aws] [redacted:slack] Authorization: Bearer [redacted:bearer] pw=[redacted:pw]";
    expect(appended.content).toBe(expected);
    const raw = (await rawRows(backend, store, s.id)).join("\n");
    for (const secret of [OPENAI, GITHUB, AWS, SLACK, BEARER, "hunter2"])
      expect(raw).not.toContain(secret);
    expect(raw).toContain(expected);
    expect(raw).toContain("[redacted:openai]");
    expect(raw).toContain('{"result":["token [redacted:github]"]}');
    expect(await store.search(GITHUB.slice(0, 12))).toEqual([]);
  });

  it("is off by default, and per profile when the profile says so", async () => {
    const home = homes.makeHome();
    const plain = await homes.open(home);
    const s = await plain.sessions.create();
    await plain.messages.append(s.id, { role: "user", content: secrets });
    expect((await rawRows(backend, plain, s.id)).join("\n")).toContain(OPENAI);

    const other = await homes.open(homes.makeHome(), {
      config: { redaction: { profiles: { default: { enabled: true } } } },
    });
    const t = await other.sessions.create();
    await other.messages.append(t.id, { role: "user", content: `x ${AWS}` });
    expect(await rawRows(backend, other, t.id)).toContain("x [redacted:aws]");
  });

  it("a clientId replay of the same secret text is the same message, not a conflict", async () => {
    const store = await homes.open(homes.makeHome(), { config: { redaction: { enabled: true } } });
    const s = await store.sessions.create();
    const m = { role: "user" as const, content: `k ${AWS}`, clientId: "c-1" };
    const first = await store.messages.append(s.id, m);
    const again = await store.messages.append(s.id, m);
    expect(again.id).toBe(first.id);
    expect(await rawRows(backend, store, s.id)).toEqual(["k [redacted:aws]", ""]);
  });

  it("refuses an invalid pattern with HEARTH_CONFIG_INVALID naming the key, and opens nothing", async () => {
    const home = homes.makeHome();
    const err = await expectHearthError(
      homes.open(home, {
        config: { redaction: { enabled: true, patterns: [{ name: "bad", regex: "(unclosed" }] } },
      }),
      "HEARTH_CONFIG_INVALID",
    );
    expect(err.message).toContain("redaction.patterns.0.regex");
    expect(err.message).toContain("not a valid regular expression");
    await expectHearthError(
      homes.open(home, { config: { redaction: { patterns: [{ name: "empty", regex: "x*" }] } } }),
      "HEARTH_CONFIG_INVALID",
    );
  });
});
