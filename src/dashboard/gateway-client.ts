import { randomBytes } from "node:crypto";
import type { HearthConfig } from "../config/schema.js";
import { HearthError } from "../errors.js";
import { gatewayRecordPath, readRecord } from "../process/gateway-lock.js";
import { liveness } from "../process/identity.js";
import type { ProfileStores } from "./profiles.js";

interface Token {
  access: string;
  refresh: string;
  /** Renew a little before the access token expires. */
  renewAt: number;
}

/**
 * How the dashboard reaches a profile's gateway (for the chat page): the
 * gateway writes its address into `run/gateway.json` once it listens; the
 * record counts only when its process is alive (same pid, start ticks and
 * boot id), so a stale record after kill -9 is never followed. When the
 * gateway requires tokens (`gateway.requireAuth`), the dashboard pairs a
 * family of its own once (a pairing code it creates and redeems at once,
 * ordinary row writes) and rotates it as the access token nears expiry.
 */
export class GatewayClient {
  private readonly tokens = new Map<string, Token>();

  constructor(
    private readonly stores: ProfileStores,
    private readonly config: HearthConfig,
  ) {}

  /** The gateway's base URL for a served profile; HEARTH_GATEWAY_UNREACHABLE when none runs. */
  address(profile: string): string {
    const record = readRecord(gatewayRecordPath(this.stores.home, profile));
    if (!record?.address || liveness(record) === "dead") {
      throw new HearthError(
        "HEARTH_GATEWAY_UNREACHABLE",
        `no gateway runs for profile ${profile}: the chat talks to the agent through it`,
        { resource: profile, hint: `hearth --profile ${profile} gateway run` },
      );
    }
    return record.address;
  }

  /** Headers for a request to the gateway: an access token when it requires one. */
  async headers(profile: string): Promise<Record<string, string>> {
    if (!this.config.gateway.requireAuth) return {};
    const lifetimes = {
      accessMs: this.config.gateway.accessTokenMinutes * 60_000,
      refreshMs: this.config.gateway.refreshTokenDays * 24 * 60 * 60_000,
    };
    let token = this.tokens.get(profile);
    if (!token || Date.now() >= token.renewAt) {
      const previous = token;
      const pair = await this.stores.withWriter(profile, async (store) => {
        if (previous) {
          const outcome = await store.tokens.rotate(previous.refresh, lifetimes).catch(() => null);
          if (outcome?.kind === "rotated") return outcome.pair;
        }
        const code = await store.tokens.createPairing({
          label: `dashboard chat (pid ${process.pid}, ${randomBytes(3).toString("hex")})`,
          ttlMs: 60_000,
          scope: "chat",
        });
        return store.tokens.redeemPairing(code.code, lifetimes);
      });
      token = {
        access: pair.accessToken,
        refresh: pair.refreshToken,
        renewAt: Date.now() + Math.max(1_000, pair.expiresIn * 1000 - 60_000),
      };
      this.tokens.set(profile, token);
    }
    return { authorization: `Bearer ${token.access}` };
  }
}
