// Pure text routines of the llm kernel.
import crypto from 'node:crypto';

// Letters, numbers, single punctuation runs, and whitespace, the way GPT-style pre-tokenizers split.
const PIECES = /'(?:s|t|re|ve|m|ll|d)|\s?\p{L}+|\s?\p{N}{1,3}|\s?[^\s\p{L}\p{N}]+|\s+/gu;

/**
 * Token estimate: GPT-style pre-tokenizer pieces; a word of up to 7 letters is one token
 * (common words are single BPE tokens), a longer one a token per 5 letters; a punctuation
 * run a token per 3 characters.
 */
export function countTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(PIECES)) {
    const piece = m[0].trim();
    if (piece.length === 0) n += 1;
    else if (/^\p{L}/u.test(piece)) n += piece.length <= 7 ? 1 : Math.ceil(piece.length / 5);
    else if (/^\p{N}/u.test(piece)) n += 1;
    else n += Math.ceil(piece.length / 3);
  }
  return n;
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Per million tokens, in USD, as the providers published them (see price_table_date). */
export const PRICE_TABLE_DATE = '2025-06-01';
export const PRICES: Record<string, { input: number; output: number }> = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'gemini-1.5-pro': { input: 1.25, output: 5 },
  'gemini-1.5-flash': { input: 0.075, output: 0.3 },
  'mistral-large': { input: 2, output: 6 },
};

function hash32(s: string): number {
  return crypto.createHash('md5').update(s).digest().readUInt32LE(0);
}

/** The hashing trick: each unigram and bigram adds ±1 to one of `dims` buckets. */
export function embed(text: string, dims: number): number[] {
  const v = new Float64Array(dims);
  const w = words(text);
  const features = [...w, ...w.slice(1).map((x, i) => `${w[i]} ${x}`)];
  for (const f of features) {
    const h = hash32(f);
    v[h % dims] += (h >>> 31) & 1 ? 1 : -1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return Array.from(v, (x) => (norm ? x / norm : 0));
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot; // both are unit vectors (or zero)
}
