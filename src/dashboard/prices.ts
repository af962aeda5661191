import type { HearthConfig } from "../config/schema.js";
import type { ActivityBucket } from "../store/activity.js";

export type Prices = HearthConfig["dashboard"]["prices"];

/** An Activity bucket with its cost: what its priced models' tokens cost. */
export interface PricedBucket extends ActivityBucket {
  /** The priced models' cost (dashboard.prices, per million tokens); null when none was priced. */
  cost: number | null;
  /** Tokens of models with no price (or no model name), not in `cost`. */
  unpricedTokens: number;
}

/**
 * The cost of each bucket's tokens from the price table (issue 47). Each
 * model is priced by its own row; a model not in the table leaves its
 * tokens in `unpricedTokens`, never guessed.
 */
export function priceBuckets(buckets: ActivityBucket[], prices: Prices): PricedBucket[] {
  return buckets.map((b) => {
    let cost: number | null = null;
    let unpricedTokens = 0;
    for (const u of b.usage) {
      const price = u.model === null ? undefined : prices[u.model];
      if (!price) {
        unpricedTokens += u.tokensIn + u.tokensOut;
        continue;
      }
      cost =
        (cost ?? 0) +
        (u.tokensIn * price.inputPerMTok + u.tokensOut * price.outputPerMTok) / 1_000_000;
    }
    return { ...b, cost, unpricedTokens };
  });
}
