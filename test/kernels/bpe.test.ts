import { expect } from 'chai';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { countBpe } from '../../kernels/llm/bpe';

// The heap merge must give js-tiktoken's own count on every text: the pieces it is built
// from (letters, scripts, emoji, digits, whitespace, special-token text, repeats), mixed by
// a fixed pseudo-random sequence so that a failure is reproducible.
const PARTS = ['a', 'b', 'e', 'ab', ' ', '  ', '\n', '\t', 'é', '日本', '🙂', '0', '12', '.', '--', '<|endoftext|>', 'yyyy', 'The ', 'ing', 'ÿ', "'s", 'http://'];

function texts(count: number): string[] {
  let seed = 42;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    let s = '';
    const len = 1 + (k % 80);
    for (let i = 0; i < len; i++) s += k % 4 === 0 ? String.fromCharCode(next(256)) : PARTS[next(PARTS.length)];
    out.push(s);
  }
  return out.concat(['x'.repeat(3000), ' '.repeat(500), 'ab'.repeat(700), '🙂'.repeat(300)]);
}

describe('BPE token count', () => {
  for (const [name, ranks] of [['o200k_base', o200k], ['cl100k_base', cl100k]] as const) {
    it(`equals js-tiktoken's count on 2,000 texts (${name})`, () => {
      const enc = new Tiktoken(ranks);
      const wrong = texts(2000).filter((t) => countBpe(enc, t) !== enc.encode(t, [], []).length);
      expect(wrong.map((t) => JSON.stringify(t.slice(0, 60)))).to.deep.equal([]);
    });
  }
});
