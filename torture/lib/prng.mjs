// A seeded PRNG (mulberry32): the same seed gives the same schedule.

/** A generator of floats in [0, 1) from a 32-bit seed. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    /** A key of `weights` drawn in proportion to its weight. */
    weighted(weights) {
      const total = Object.values(weights).reduce((a, b) => a + b, 0);
      let r = next() * total;
      for (const [key, w] of Object.entries(weights)) {
        r -= w;
        if (r < 0) return key;
      }
      return Object.keys(weights).at(-1);
    },
  };
}
