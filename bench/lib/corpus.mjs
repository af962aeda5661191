// Deterministic synthetic transcripts: a seeded PRNG, a fixed vocabulary of
// made-up words and a Zipf word distribution, so every run of the bench
// writes and searches exactly the same text.

/** Bump when the generated text changes (it is part of every results file). */
export const GENERATOR_VERSION = 1;

const SYLLABLES = (
  "ka ri to me su na lo vi pe da ne mo ru sa ti lu ge ba zo fi ha ko ye " +
  "wa ju xe qu ni ra ce po mi tu le si go de bo fa nu ze hi la ve so"
).split(" ");
export const VOCABULARY_SIZE = 8192;
/** Query words skip the most frequent words (they behave like stop words). */
export const QUERY_SKIP_TOP = 64;

/** mulberry32: a small, fast, well-distributed 32-bit PRNG. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let vocabulary;
/** 8,192 distinct made-up words of 2–4 syllables, the same on every run. */
export function words() {
  if (vocabulary) return vocabulary;
  const rand = prng(0x5eed);
  const seen = new Set();
  while (seen.size < VOCABULARY_SIZE) {
    const n = 2 + Math.floor(rand() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    seen.add(w);
  }
  vocabulary = [...seen];
  return vocabulary;
}

const TABLE_BITS = 20;
let zipfTable;
/** Rank lookup table for a Zipf(s = 1) draw in O(1): index by 20 random bits. */
function zipf() {
  if (zipfTable) return zipfTable;
  const n = VOCABULARY_SIZE;
  let h = 0;
  for (let r = 1; r <= n; r++) h += 1 / r;
  zipfTable = new Uint16Array(1 << TABLE_BITS);
  let rank = 0;
  let cdf = 1 / h;
  for (let i = 0; i < zipfTable.length; i++) {
    const u = (i + 0.5) / zipfTable.length;
    while (u > cdf && rank < n - 1) {
      rank++;
      cdf += 1 / ((rank + 1) * h);
    }
    zipfTable[i] = rank;
  }
  return zipfTable;
}

// Role mix and length (in words) of a message: short user turns, longer
// assistant answers, long tool outputs. Mean ≈ 85 words ≈ 650 bytes.
export const AGENT_SHAPES = [
  { role: "user", share: 0.3, min: 4, max: 40 },
  { role: "assistant", share: 0.45, min: 20, max: 180 },
  { role: "tool", share: 0.25, min: 40, max: 260 },
];
/** Short chat turns only: 3–15 words, about 65 bytes. */
export const CHAT_SHAPES = [
  { role: "user", share: 0.5, min: 3, max: 12 },
  { role: "assistant", share: 0.5, min: 5, max: 15 },
];

/**
 * A message generator. `next()` returns `{ role, content }`; the sequence
 * depends only on `seed` and `shapes`.
 */
export function messages(seed, shapes = AGENT_SHAPES) {
  const rand = prng(seed);
  const vocab = words();
  const table = zipf();
  const mask = (1 << TABLE_BITS) - 1;
  return {
    next() {
      const pick = rand();
      let shape = shapes[shapes.length - 1];
      let acc = 0;
      for (const s of shapes) {
        acc += s.share;
        if (pick < acc) {
          shape = s;
          break;
        }
      }
      const n = shape.min + Math.floor(rand() * (shape.max - shape.min + 1));
      const parts = new Array(n);
      for (let i = 0; i < n; i++) parts[i] = vocab[table[(rand() * 4294967296) & mask]];
      return { role: shape.role, content: parts.join(" ") };
    },
  };
}

/** `count` messages from `seed`, as an array (for timed loops that must not generate). */
export function messageList(seed, count, shapes = AGENT_SHAPES) {
  const gen = messages(seed, shapes);
  return Array.from({ length: count }, () => gen.next());
}

/**
 * Search queries: 70% one word, 30% two words (FTS5 ANDs them); words drawn
 * uniformly from the vocabulary minus its QUERY_SKIP_TOP most frequent words.
 */
export function queries(seed, count) {
  const rand = prng(seed);
  const vocab = words();
  const word = () =>
    vocab[QUERY_SKIP_TOP + Math.floor(rand() * (VOCABULARY_SIZE - QUERY_SKIP_TOP))];
  return Array.from({ length: count }, () => (rand() < 0.7 ? word() : `${word()} ${word()}`));
}

/** The FTS5 query hearth builds from such text (toFtsQuery): every word quoted. */
export function ftsQuery(text) {
  return text
    .split(" ")
    .map((w) => `"${w}"`)
    .join(" ");
}

/** Frequency ranks of the scaling workload's query words: [from, to) of the vocabulary. */
export const COMMON_RANKS = [QUERY_SKIP_TOP, 512];
export const RARE_RANKS = [512, VOCABULARY_SIZE];

/**
 * Search queries of one word each, a third of them common (frequency ranks
 * 64–511: each in about 2–13% of messages) and two thirds rare (ranks
 * 512–8,191: 0.1–2%), shuffled. The common third sets the p99 (long FTS
 * posting lists to rank), the rare two thirds the p50. Returns
 * [{ text, common }].
 */
export function mixedQueries(seed, count) {
  const rand = prng(seed);
  const vocab = words();
  const pick = ([from, to]) => vocab[from + Math.floor(rand() * (to - from))];
  return Array.from({ length: count }, () => {
    const common = rand() < 1 / 3;
    return { text: pick(common ? COMMON_RANKS : RARE_RANKS), common };
  });
}
