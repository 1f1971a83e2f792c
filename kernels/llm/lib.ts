// Pure text routines of the llm kernel.
import crypto from 'node:crypto';

export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

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
