import { z } from 'zod';
import { invalid } from '../../core/errors';

// Money is integer minor units inside (numbers: exact up to 2^53, about 90 trillion dollars in
// cents) and decimal strings outside. No float ever holds an amount.

/** An amount as the API shows it: `{amount: "12.34", currency: "USD"}`. */
export const moneySchema = z.object({ amount: z.string(), currency: z.string() });
export type Money = z.infer<typeof moneySchema>;

/** Minor units as a decimal string with the currency's decimals: 1234, 2 -> "12.34". */
export function decimal(minor: number, decimals: number): string {
  const neg = minor < 0;
  const digits = String(Math.abs(Math.round(minor))).padStart(decimals + 1, '0');
  const text = decimals ? `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : digits;
  return neg ? `-${text}` : text;
}

/** Formats minor units in `currency` (its decimals from the table). */
export function money(minor: number, currency: string, currencies: Record<string, number>): Money {
  return { amount: decimal(minor, currencies[currency] ?? 2), currency };
}

const DECIMAL = /^(-)?(\d{1,15})(?:\.(\d+))?$/;

/**
 * Parses an amount given as a JSON number or a decimal string into minor units; more
 * decimals than the currency has is an error, not a rounding. Numbers are read through their
 * shortest decimal text (12.34 -> "12.34"), which is what the client wrote.
 */
export function parseAmount(value: number | string, decimals: number, loc: Array<string | number>): number {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? numberText(value) : '') : value.trim();
  const m = DECIMAL.exec(text);
  if (!m) throw invalid(loc, 'a decimal amount such as 12.34');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  if (frac.length > decimals) throw invalid(loc, `at most ${decimals} decimal places for this currency`);
  const minor = Number(m[2]) * 10 ** decimals + Number(frac.padEnd(decimals, '0') || '0');
  if (!Number.isSafeInteger(minor)) throw invalid(loc, 'amount too large');
  return m[1] ? -minor : minor;
}

function numberText(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // 1e-7 and the like: more decimals than any currency has; write them out so the check says so.
  return n.toFixed(20).replace(/0+$/, '');
}

/** round(quantity * amount / per), half away from zero, in exact integer arithmetic. */
export function priceOf(quantity: number, price: { amount: number; per: number }): number {
  // Quantities may be fractional (CPU milliseconds): scaled to micro-units first.
  const q = BigInt(Math.round(quantity * 1_000_000));
  const num = q * BigInt(price.amount);
  const den = BigInt(price.per) * 1_000_000n;
  const whole = num / den;
  const rest = num % den;
  return Number(rest * 2n >= den ? whole + 1n : whole);
}

/** round(minor * bps / 10000), half away from zero. */
export function bpsOf(minor: number, bps: number): number {
  const num = BigInt(minor) * BigInt(bps);
  const whole = num / 10_000n;
  return Number((num % 10_000n) * 2n >= 10_000n ? whole + 1n : whole);
}

/** minor * part / whole rounded half up (proration by time). */
export function prorate(minor: number, part: number, whole: number): number {
  if (whole <= 0) return 0;
  const num = BigInt(minor) * BigInt(Math.round(part));
  const den = BigInt(Math.round(whole));
  const q = num / den;
  return Number((num % den) * 2n >= den ? q + 1n : q);
}
