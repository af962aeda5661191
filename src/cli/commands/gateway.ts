import type { Command } from "commander";
import { claimGateway } from "../../process/instance.js";
import { setProcessKind } from "../../process/kind.js";
import { openStore } from "../../store/open.js";
import { globals } from "../globals.js";

/**
 * `hearth gateway run`: the long-running daemon of a profile. It holds the
 * profile's store as a writer and the single-instance gateway lock (P3),
 * prints one JSON readiness line, and on SIGTERM/SIGINT lets go of both and
 * exits 0.
 */
export function registerGateway(program: Command): void {
  const gateway = program.command("gateway").description("the long-running gateway daemon");
  gateway
    .command("run")
    .description("serve a profile (one gateway per profile; a second one exits 3 naming the first)")
    .action(async (_options: unknown, command: Command) => {
      const g = globals(command);
      setProcessKind("gateway");
      const store = await openStore({ home: g.home, profile: g.profile });
      let lock: ReturnType<typeof claimGateway>;
      try {
        lock = claimGateway(store);
      } catch (err) {
        await store.close();
        throw err;
      }
      // Signal handlers alone do not keep Node running.
      const alive = setInterval(() => undefined, 2 ** 30);
      const stopped = new Promise<string>((resolve) => {
        process.once("SIGTERM", () => resolve("SIGTERM"));
        process.once("SIGINT", () => resolve("SIGINT"));
      });
      process.stdout.write(
        `${JSON.stringify({ event: "gateway.ready", pid: process.pid, profile: store.profile, path: store.path })}\n`,
      );
      const signal = await stopped;
      clearInterval(alive);
      lock.release();
      await store.close();
      process.stdout.write(
        `${JSON.stringify({ event: "gateway.stopped", pid: process.pid, signal })}\n`,
      );
    });
}
