import type { Command } from "commander";
import { resolveHome } from "../../config/paths.js";
import { isHearthError } from "../../errors.js";
import type { Store } from "../../store/api.js";
import type { ProfileRuntime } from "../../turn/run.js";
import { globals } from "../globals.js";
import { EXIT, reportError } from "../output.js";
import { printable } from "../printable.js";

interface ChatOptions {
  chat: string;
  claimWindowMs: number;
  dispatchTimeoutMs: number;
}

const ms = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0)
    throw new TypeError(`expected milliseconds, got ${JSON.stringify(v)}`);
  return n;
};

/**
 * `hearth chat`: a terminal chat on the same store as the gateway (a CLI
 * writer). Each line is a turn under the session's lease. `/handoff
 * <platform>` asks the gateway to deliver the session and waits in two
 * phases: a short claim window (its timeout means "no gateway": only then
 * is the still-pending row failed), then up to the dispatch timeout for the
 * claimed delivery, watching the owner's heartbeats. It never fails a
 * running row: that belongs to the gateway that claimed it (D5).
 */
export function registerChat(program: Command, setExit: (code: number) => void): void {
  program
    .command("chat")
    .description(
      "chat in the terminal on the profile's store; /handoff <platform> hands the session to the gateway",
    )
    .option("--chat <key>", "the chat this terminal speaks in (one session per chat)", "terminal")
    .option("--claim-window-ms <ms>", "how long a gateway has to claim a handoff", ms, 10_000)
    .option("--dispatch-timeout-ms <ms>", "how long to wait for a claimed handoff", ms, 15 * 60_000)
    .action(async (o: ChatOptions, command: Command) => {
      const g = globals(command);
      const home = resolveHome(g.home);
      const [
        { loadConfig },
        { openStore },
        { GroupCommitter },
        { createResponder },
        { runTurn },
        { ToolRegistry },
      ] = await Promise.all([
        import("../../config/load.js"),
        import("../../store/open.js"),
        import("../../turn/group-commit.js"),
        import("../../turn/responder.js"),
        import("../../turn/run.js"),
        import("../../turn/tools/registry.js"),
      ]);
      const config = loadConfig({ home });
      const store = await openStore({ home, profile: g.profile, role: "writer" });
      const runtime: ProfileRuntime = {
        profile: store.profile,
        store,
        committer: new GroupCommitter(store, false),
      };
      const deps = {
        responder: createResponder(config),
        config,
        tools: await ToolRegistry.load(config.tools),
        signal: new AbortController().signal,
      };
      const say = (event: Record<string, unknown>, text: string) =>
        process.stdout.write(g.json ? `${JSON.stringify(event)}\n` : text);
      let failed = false;
      // Loaded here: every other command would pay for node:readline at start-up.
      const { createInterface } = await import("node:readline");
      try {
        for await (const line of createInterface({ input: process.stdin, terminal: false })) {
          const text = line.trim();
          if (!text) continue;
          if (text === "/quit") break;
          const handoff = /^\/handoff\s+(\S+)$/.exec(text);
          try {
            if (handoff) {
              failed = !(await handOff(store, o, handoff[1]!, say)) || failed;
              continue;
            }
            if (!g.json) process.stdout.write("> ");
            const result = await runTurn(
              runtime,
              { platform: "cli", chat: o.chat, content: text },
              deps,
              {
                ...(g.json ? {} : { onDelta: (t: string) => process.stdout.write(printable(t)) }),
              },
            );
            say({ event: "reply", session: result.session.id, reply: result.reply }, "\n");
          } catch (err) {
            failed = true;
            if (!isHearthError(err)) throw err;
            reportError(err, { json: g.json });
          }
        }
      } finally {
        await deps.tools.close();
        await store.close();
      }
      setExit(failed ? EXIT.error : EXIT.ok);
    });
}

async function handOff(
  store: Store,
  o: ChatOptions,
  platform: string,
  say: (event: Record<string, unknown>, text: string) => void,
): Promise<boolean> {
  const session = await store.sessions.resolveChat("cli", o.chat);
  if (!(await store.handoffs.request(session.id, platform))) {
    say(
      { event: "handoff.busy", session: session.id },
      "a handoff of this session is already pending or running\n",
    );
    return false;
  }
  say({ event: "handoff.pending", session: session.id, platform }, `handing off to ${platform}…\n`);
  const state = async () => (await store.sessions.require(session.id)).handoff;
  // Phase 1: the claim window. Only a row still pending may be failed, and only here.
  const claimBy = Date.now() + o.claimWindowMs;
  while ((await state())?.state === "pending" && Date.now() < claimBy) await sleep(100);
  if ((await state())?.state === "pending") {
    if (
      await store.handoffs.failPending(
        session.id,
        `no gateway claimed it within ${o.claimWindowMs} ms`,
      )
    ) {
      say(
        { event: "handoff.unclaimed", session: session.id },
        "no gateway is running for this profile: nobody claimed the handoff\n",
      );
      return false;
    }
  }
  // Phase 2: claimed; wait for the owner to finish, reporting its heartbeats.
  const doneBy = Date.now() + o.dispatchTimeoutMs;
  let seen = 0;
  for (;;) {
    const h = await state();
    if (h?.state === "completed") {
      say({ event: "handoff.completed", session: session.id }, `delivered to ${platform}\n`);
      return true;
    }
    if (h?.state === "failed") {
      say(
        { event: "handoff.failed", session: session.id, error: h.error },
        `the handoff failed: ${h.error}\n`,
      );
      return false;
    }
    if (Date.now() >= doneBy) {
      say(
        { event: "handoff.still_running", session: session.id, owner: h?.owner },
        `still being delivered by ${h?.owner}; it is the gateway's to finish, so it is left running\n`,
      );
      return false;
    }
    if (h?.updatedAt && h.updatedAt !== seen) {
      seen = h.updatedAt;
      say({ event: "handoff.running", session: session.id, owner: h.owner }, "");
    }
    await sleep(200);
  }
}

function sleep(msecs: number): Promise<void> {
  return new Promise((r) => setTimeout(r, msecs));
}
