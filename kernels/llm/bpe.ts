import type { Tiktoken } from 'js-tiktoken/lite';

// js-tiktoken merges a piece's byte pairs by rescanning the whole piece after every merge
// (quadratic, with a string key built per pair per pass): 2,000 repeats of one letter took
// 0.3 s and 50,000 three minutes, so one request could hold a worker far past its timeout.
// This counts the same tokens with a heap: each step still merges the adjacent pair of lowest
// rank, the leftmost on a tie, exactly as tiktoken does, in O(n log n).

/** The parts of js-tiktoken's encoder this reads (public at run time, internal in its types). */
interface Internals {
  rankMap: Map<string, number>;
  patStr: string;
}

/** Tokens of `text` in the encoder's BPE, special-token text counted as ordinary text. */
export function countBpe(encoder: Tiktoken, text: string): number {
  const { rankMap, patStr } = encoder as unknown as Internals;
  // Another js-tiktoken version may keep these elsewhere: its own encode stays correct.
  if (!(rankMap instanceof Map) || typeof patStr !== 'string') return encoder.encode(text, [], []).length;
  const utf8 = new TextEncoder();
  let n = 0;
  for (const m of text.matchAll(new RegExp(patStr, 'gu'))) {
    const piece = utf8.encode(m[0]);
    n += piece.length === 1 || rankMap.has(piece.join(',')) ? 1 : mergedParts(piece, rankMap);
  }
  return n;
}

/** The number of parts a piece's bytes merge into. */
export function mergedParts(piece: Uint8Array, ranks: Map<string, number>): number {
  const len = piece.length;
  // A part is known by the offset of its first byte; `end[a]` is where part `a` ends.
  const end = new Int32Array(len);
  const prev = new Int32Array(len);
  const alive = new Uint8Array(len).fill(1);
  for (let i = 0; i < len; i++) {
    end[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new PairHeap();
  const rankOf = (a: number, c: number) => ranks.get(piece.subarray(a, c).join(','));
  const offer = (a: number) => {
    const b = end[a];
    if (b >= len) return;
    const r = rankOf(a, end[b]);
    if (r !== undefined) heap.push(r, a, b, end[b]);
  };
  for (let i = 0; i + 1 < len; i++) offer(i);
  let parts = len;
  for (let top = heap.pop(); top; top = heap.pop()) {
    const [, a, b, c] = top;
    // Entries go stale when a neighbour merges first: the pair must still be two whole parts.
    if (!alive[a] || !alive[b] || end[a] !== b || end[b] !== c) continue;
    end[a] = c;
    alive[b] = 0;
    if (c < len) prev[c] = a;
    parts--;
    if (prev[a] >= 0) offer(prev[a]);
    offer(a);
  }
  return parts;
}

/** A binary min-heap of (rank, left offset, middle, end), ordered by rank then left offset. */
class PairHeap {
  private readonly items: Array<[number, number, number, number]> = [];

  push(rank: number, a: number, b: number, c: number): void {
    const items = this.items;
    items.push([rank, a, b, c]);
    let i = items.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(items[i], items[p])) break;
      [items[i], items[p]] = [items[p], items[i]];
      i = p;
    }
  }

  pop(): [number, number, number, number] | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && less(items[l], items[m])) m = l;
        if (r < items.length && less(items[r], items[m])) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

function less(x: [number, number, number, number], y: [number, number, number, number]): boolean {
  return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
}
