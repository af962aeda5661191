// Two more writers of a torture run:
//
// - the dashboard's chat (`POST /api/chat`, docs/dashboard.md): the
//   dashboard passes the message to the profile's gateway and streams its
//   events back; `stored` means committed and acknowledged, so the message
//   goes to the ledger then;
// - `hearth acp` (ACP over stdio, docs/acp.md): a real child driven with
//   JSON-RPC lines (initialize, session/new, session/prompt). A prompt
//   answered `end_turn` is acknowledged: `tchat a<n>-<i>` goes to the
//   ledger under the ACP session. Some are killed -9 mid-prompt (nothing
//   unanswered is counted). Exit 0 after stdin closes, else it must be a
//   coded error.
import { CLI } from "./maintenance.mjs";
import { Proc } from "./proc.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One dashboard chat message to `profile`; returns whether it was acknowledged. */
export async function dashboardChat(actors, profile, n) {
  const { stats, ledger } = actors;
  const d = actors.dashboard;
  try {
    await actors.dashboardReady;
  } catch {
    return false;
  }
  if (!d?.address) return false;
  const clientId = `d${n}`;
  stats.dashboardChat.sent++;
  let status = "";
  try {
    const res = await fetch(`${d.address}/api/chat`, {
      method: "POST",
      headers: {
        cookie: d.cookie,
        "x-csrf-token": d.csrf,
        "content-type": "application/json",
        origin: d.address,
      },
      body: JSON.stringify({ profile, content: `message ${clientId}`, clientId }),
      signal: AbortSignal.timeout(30_000),
    });
    status = String(res.status);
    const text = await res.text();
    if (res.status === 200) {
      // Server-sent events: `event: stored` then `data: {...}`.
      const events = text.split("\n\n").map((block) => {
        const ev = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        try {
          return { ev, data: data ? JSON.parse(data) : undefined };
        } catch {
          return { ev, data: undefined };
        }
      });
      const stored = events.find((e) => e.ev === "stored");
      const session =
        stored?.data?.session?.id ?? stored?.data?.sessionId ?? stored?.data?.message?.sessionId;
      if (stored && session) {
        ledger.ack(clientId, session, "dashboard", profile);
        stats.dashboardChat.acked++;
        status = "200 stored";
      } else if (stored) {
        stats.dashboardChat.firstUnparsed ??= text.slice(0, 600);
        status = "200 stored (no session id)";
      } else {
        status = `200 ${events.find((e) => e.ev === "error")?.data?.error?.code ?? "no stored event"}`;
      }
    } else {
      const body = (() => {
        try {
          return JSON.parse(text);
        } catch {
          return undefined;
        }
      })();
      if (body?.error?.code) status = `${res.status} ${body.error.code}`;
    }
  } catch (err) {
    status = `error ${err.cause?.code ?? err.name}`;
  }
  status = actors.faults.label(status);
  stats.dashboardChat.answers[status] = (stats.dashboardChat.answers[status] ?? 0) + 1;
  // A dashboard 500 is counted by the must-be-0 row dashboard500s.
  if (status.startsWith("500"))
    stats.dashboard.errors[`${status} (chat)`] =
      (stats.dashboard.errors[`${status} (chat)`] ?? 0) + 1;
  return status === "200 stored";
}

/** A `hearth acp` child: `turns` prompts on a new session of `profile`; killed -9 mid-prompt when `kill`. */
export async function acpRun(actors, profile, n, turns, kill) {
  const { stats, ledger, home } = actors;
  const proc = new Proc([CLI, "--home", home, "--profile", profile, "acp"], {
    env: { HEARTH_PROCESS_KIND: "" },
    name: "acp",
  });
  actors.acps.add(proc);
  stats.acp.runs++;
  let id = 0;
  const call = async (method, params, ms = 60_000) => {
    const mine = ++id;
    const reply = proc.json(
      (m) => m.id === mine && m.method === undefined,
      ms,
      `reply to ${method}`,
    );
    proc.send({ jsonrpc: "2.0", id: mine, method, params });
    const r = await reply;
    if (r.error) throw Object.assign(new Error(r.error.message), { rpc: r.error });
    return r.result;
  };
  try {
    await call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await call("session/new", { cwd: "/", mcpServers: [] });
    for (let i = 0; i < turns; i++) {
      const tag = `a${n}-${i}`;
      const answer = call("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: `tchat ${tag}` }],
      });
      if (kill && i === turns - 1) {
        // Mid-prompt: its user message may or may not be committed; it was never acknowledged.
        await sleep(Math.floor(Math.random() * 30));
        await proc.kill("SIGKILL");
        stats.acp.killed++;
        await answer.catch(() => undefined);
        return;
      }
      const r = await answer;
      if (r?.stopReason === "end_turn") {
        ledger.ack(tag, sessionId, "acp", profile);
        stats.acp.turns++;
      } else {
        const key = `stopReason ${r?.stopReason}`;
        stats.acp.other[key] = (stats.acp.other[key] ?? 0) + 1;
      }
    }
  } catch (err) {
    const key = err.rpc
      ? `rpc error ${err.rpc.code} ${err.rpc.data?.code ?? err.rpc.message?.match(/HEARTH_[A-Z_]+/)?.[0] ?? ""}`
      : `no reply (${err.message.split("\n")[0].slice(0, 120)})`;
    stats.acp.other[key] = (stats.acp.other[key] ?? 0) + 1;
  } finally {
    proc.child.stdin.end();
    const t = setTimeout(() => proc.signal("SIGKILL"), 20_000);
    const { code, signal } = await proc.exited;
    clearTimeout(t);
    actors.acps.delete(proc);
    if (!kill && code !== 0 && !(code === 1 && /HEARTH_[A-Z_]+/.test(proc.stderr)))
      stats.unexpectedExits.push(`hearth acp exited ${signal ?? code}: ${proc.stderr.slice(-600)}`);
  }
}
