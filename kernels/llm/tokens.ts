// Token counts: the real BPE encodings (js-tiktoken ships their ranks inside the package, so
// nothing is fetched at run time) for the model families whose encoding is published; an
// estimate, marked as such, for every other model.
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { countBpe } from './bpe';

export type Encoding = 'o200k_base' | 'cl100k_base';

// Model name prefixes and their encodings (OpenAI's published mapping); first match wins.
const FAMILIES: Array<[RegExp, Encoding]> = [
  [/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)/, 'o200k_base'],
  [/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/, 'cl100k_base'],
];

const RANKS = { o200k_base: o200k, cl100k_base: cl100k } as const;
const encoders = new Map<Encoding, Tiktoken>();

function encoder(name: Encoding): Tiktoken {
  let e = encoders.get(name);
  if (!e) {
    // Built on first use: the o200k table takes a few hundred ms and tens of MB.
    e = new Tiktoken(RANKS[name]);
    encoders.set(name, e);
  }
  return e;
}

/** The encoding of a model, or null when its tokenizer is not published. */
export function encodingOf(model: string | undefined): Encoding | null {
  if (model === undefined) return 'o200k_base';
  const m = model.toLowerCase();
  for (const [re, enc] of FAMILIES) if (re.test(m)) return enc;
  return null;
}

// Letters, numbers, single punctuation runs, and whitespace, the way GPT-style pre-tokenizers split.
const PIECES = /'(?:s|t|re|ve|m|ll|d)|\s?\p{L}+|\s?\p{N}{1,3}|\s?[^\s\p{L}\p{N}]+|\s+/gu;

/**
 * Estimate for models without a published tokenizer: pre-tokenizer pieces; a word of up to 7
 * letters one token, a longer one a token per 5 letters; a punctuation run a token per 3.
 */
export function estimateTokens(text: string): number {
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

/** Tokens of a text for a model (o200k_base when no model is named), and how they were counted. */
export function countTokens(text: string, model?: string): { tokens: number; method: string; exact: boolean } {
  const enc = encodingOf(model);
  if (!enc) return { tokens: estimateTokens(text), method: 'estimate:pretokenizer', exact: false };
  // Special-token text is counted as ordinary text (the API does the same for user content).
  return { tokens: countBpe(encoder(enc), text), method: `bpe:${enc}`, exact: true };
}
