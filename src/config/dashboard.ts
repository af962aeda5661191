import { bindHost } from "./hosts.js";
import { once } from "./once.js";
import { int, z } from "./zod.js";

/** The `dashboard` section of config.json (docs/dashboard.md). */
export const dashboardSchema = once(() => {
  const dashboardTls = z
    .object({
      /** PEM certificate chain and private key files (read at start). */
      certFile: z.string().min(1),
      keyFile: z.string().min(1),
    })
    .strict();

  const price = z.number().finite().min(0).max(1_000_000);
  const modelPrice = z
    .object({
      /** Currency units (as the operator counts them) per million prompt tokens. */
      inputPerMTok: price,
      /** Per million completion tokens. */
      outputPerMTok: price,
    })
    .strict();

  return z
    .object({
      /** Anything but a loopback address needs dashboard.tls (docs/dashboard.md). */
      host: bindHost().default("127.0.0.1"),
      /** 0 picks a free port (printed in the readiness line). */
      port: int(0, 65535).default(8788),
      /** Host names (besides loopback and the bound address) the dashboard answers for: DNS-rebinding defence. */
      allowedHosts: z.array(z.string().min(1).max(253)).max(256).default([]),
      /** Serve HTTPS with this certificate; required to listen beyond loopback. */
      tls: dashboardTls.optional(),
      /** How long a login link stays valid. */
      loginLinkMinutes: int(1, 7 * 24 * 60).default(60),
      /**
       * The login cookie's name. Unset: `hearth_dashboard` on PostgreSQL (one
       * name for every host sharing the database's logins), else
       * `hearth_dashboard_<port>` (dashboards on one host keep apart).
       */
      cookieName: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, _ and - only (at most 64)")
        .optional(),
      /** A browser session ends after this long without a request. */
      sessionIdleMinutes: int(1, 30 * 24 * 60).default(12 * 60),
      /** How often the live stream asks SQLite whether another process wrote (PRAGMA data_version). */
      livePollMs: int(20, 60_000).default(250),
      /** How often the dashboard runs doctor on each profile by itself; 0: only when asked or visited. */
      doctorEveryMs: int(0, 7 * 86_400_000).default(900_000),
      /** A health page read re-runs doctor when its last run is older than this. */
      doctorFreshMs: int(1000, 86_400_000).default(300_000),
      /**
       * What a model's tokens cost, per million, keyed by the model name an
       * endpoint reports (issue 47): the Activity page's cost. A model not
       * listed is shown with its tokens and no cost.
       */
      prices: z.record(z.string().min(1).max(200), modelPrice).default({}),
    })
    .strict();
});
