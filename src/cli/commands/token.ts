import type { Command } from "commander";
import { DEFAULT_SCOPE, isScope, TOKEN_SCOPES, type TokenScope } from "../../store/token-scopes.js";
import { globals } from "../globals.js";
import { printJson } from "../output.js";

// Loaded when the command runs, never by `hearth --help` or another command.
const openStore: typeof import("../../store/open.js").openStore = async (...a) =>
  (await import("../../store/open.js")).openStore(...a);

/** `hearth token create | list | revoke`: pairing codes and token families for remote clients (D6). */
export function registerToken(program: Command): void {
  const token = program
    .command("token")
    .description("pair remote clients (one-time codes, rotating tokens)");
  token
    .command("create")
    .description("a one-time pairing code; a client trades it for tokens at POST /v1/auth/pair")
    .option("--label <label>", "who or what it is for")
    .option(
      "--ttl-minutes <n>",
      "how long the code can be redeemed",
      (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 1440)
          throw new TypeError(`--ttl-minutes must be 1..1440, got ${JSON.stringify(v)}`);
        return n;
      },
      10,
    )
    .option(
      "--scope <scope>",
      "what its tokens may do: read (list, get, search, export), chat (read and send messages), admin (chat and rename, delete, archive, maintenance)",
      (v) => {
        if (!isScope(v))
          throw new TypeError(
            `--scope must be ${TOKEN_SCOPES.join(", ")}; got ${JSON.stringify(v)}`,
          );
        return v;
      },
      DEFAULT_SCOPE,
    )
    .action(
      async (o: { label?: string; ttlMinutes: number; scope: TokenScope }, command: Command) => {
        const g = globals(command);
        const store = await openStore({ home: g.home, profile: g.profile, role: "writer" });
        try {
          const created = await store.tokens.createPairing({
            ttlMs: o.ttlMinutes * 60_000,
            scope: o.scope,
            ...(o.label ? { label: o.label } : {}),
          });
          await store.audit.record({
            action: "token.create",
            targets: [created.familyId],
            detail: {
              kind: "pairing",
              scope: created.scope,
              ...(o.label ? { label: o.label } : {}),
            },
          });
          if (g.json)
            printJson({
              ...created,
              profile: store.profile,
              expiresAt: new Date(created.expiresAt).toISOString(),
            });
          else
            process.stdout.write(
              `pairing code: ${created.code}\n(single use, expires ${new Date(created.expiresAt).toISOString()}; family ${created.familyId}; profile ${store.profile}, scope ${created.scope})\n`,
            );
        } finally {
          await store.close();
        }
      },
    );
  token
    .command("list")
    .description("token families and whether they are revoked")
    .action(async (_o: unknown, command: Command) => {
      const g = globals(command);
      const store = await openStore({ home: g.home, profile: g.profile, role: "reader" });
      try {
        const families = await store.tokens.families();
        if (g.json) return printJson(families);
        for (const f of families)
          process.stdout.write(
            `${f.id}  ${new Date(f.createdAt).toISOString()}  ${f.scope}${f.allProfiles ? " (all profiles)" : ""}  ${f.label ?? ""}  ${f.revokedAt ? `revoked: ${f.revokedReason}` : "active"}\n`,
          );
      } finally {
        await store.close();
      }
    });
  token
    .command("revoke <family>")
    .description("revoke every token of a family")
    .action(async (family: string, _o: unknown, command: Command) => {
      const g = globals(command);
      const store = await openStore({
        home: g.home,
        profile: g.profile,
        role: "writer",
        create: false,
      });
      try {
        const revoked = await store.tokens.revokeFamily(family, "revoked by hearth token revoke");
        if (revoked)
          await store.audit.record({ action: "token.revoke", targets: [family], detail: null });
        if (g.json) printJson({ family, revoked });
        else
          process.stdout.write(
            revoked ? `revoked ${family}\n` : `${family} was unknown or already revoked\n`,
          );
      } finally {
        await store.close();
      }
    });
}
