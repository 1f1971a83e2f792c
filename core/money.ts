// Money of /aiops and /uaicp: integer micro-units (6 decimals) of a currency. LLM costs are fractions of a
// cent per call, so cents would round most of them to zero; decimal strings in answers.
import { invalid } from './errors';

export const DECIMALS = 6;
const SCALE = 10 ** DECIMALS;
const DECIMAL = /^-?\d{1,12}(\.\d+)?$/;

/** A number or decimal string to micro-units; 422 at `loc` for more than 6 decimals or a bad value. */
export function toMicros(v: number | string, loc: Array<string | number>, allowNegative = false): number {
  const text = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'x') : v.trim();
  if (!DECIMAL.test(text)) throw invalid(loc, 'an amount: a number or decimal string');
  const [whole, frac = ''] = text.replace('-', '').split('.');
  if (frac.length > DECIMALS) throw invalid(loc, `at most ${DECIMALS} decimals`);
  const micros = Number(whole) * SCALE + Number(frac.padEnd(DECIMALS, '0'));
  if (!Number.isSafeInteger(micros)) throw invalid(loc, 'amount too large');
  if (text.startsWith('-') && !allowNegative) throw invalid(loc, 'must not be negative');
  return text.startsWith('-') ? -micros : micros;
}

/** Micro-units to a decimal string with 6 decimals. */
export function fromMicros(m: number): string {
  const sign = m < 0 ? '-' : '';
  const a = Math.abs(Math.round(m));
  return `${sign}${Math.floor(a / SCALE)}.${String(a % SCALE).padStart(DECIMALS, '0')}`;
}

/** A float amount (telemetry's cost_usd) to micro-units. */
export const floatToMicros = (x: number) => Math.round(x * SCALE);
