// OTLP attribute values (AnyValue) as the plain values our events hold: strings, finite
// numbers, booleans and lists of those, within the store's bounds (64 attributes, names of
// at most 128 characters, strings of at most 4096). A value the store cannot hold as it is
// (a map, a list of maps, bytes) is kept as JSON or base64 text, and an overlong string is
// cut, rather than the whole span refused.
import { num, type AnyValue, type KeyValue } from './proto';

export type Scalar = string | number | boolean;
export type AttrValue = Scalar | Scalar[];
export type Attrs = Record<string, AttrValue>;

export const MAX_ATTRS = 64;
const MAX_NAME = 128;
const MAX_STRING = 4096;
const MAX_ITEM = 1024;
const MAX_ITEMS = 64;

/** The JSON form of an AnyValue (maps as objects, lists as arrays, bytes as base64). */
export function plain(v: AnyValue | null | undefined, depth = 0): unknown {
  if (!v || depth > 16) return null;
  if (v.stringValue != null) return v.stringValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.intValue != null) return num(v.intValue);
  if (v.doubleValue != null) return v.doubleValue;
  if (v.bytesValue != null) return Buffer.from(v.bytesValue).toString('base64');
  if (v.arrayValue != null) return (v.arrayValue.values ?? []).map((x) => plain(x, depth + 1));
  if (v.kvlistValue != null) {
    const out: Record<string, unknown> = {};
    for (const kv of v.kvlistValue.values ?? []) if (kv.key) out[kv.key] = plain(kv.value, depth + 1);
    return out;
  }
  return null;
}

const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);
const finite = (n: number) => (Number.isFinite(n) ? n : String(n));

function scalar(x: unknown, max: number): Scalar | null {
  if (typeof x === 'string') return cut(x, max);
  if (typeof x === 'number') return finite(x);
  if (typeof x === 'boolean') return x;
  return null;
}

/** One attribute value within the store's bounds; null for an empty value. */
export function storable(v: AnyValue | null | undefined): AttrValue | null {
  const p = plain(v);
  if (p === null || p === undefined) return null;
  const s = scalar(p, MAX_STRING);
  if (s !== null) return s;
  if (Array.isArray(p) && p.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) {
    return p.slice(0, MAX_ITEMS).map((x) => scalar(x, MAX_ITEM)!);
  }
  return cut(JSON.stringify(p), MAX_STRING);
}

/** Attributes as a plain record, the first `room` of them, within the store's bounds. */
export function attrsOf(list: KeyValue[] | null | undefined, room = MAX_ATTRS, into: Attrs = {}, prefix = ''): Attrs {
  if (!list) return into;
  let n = Object.keys(into).length;
  for (const kv of list) {
    if (n >= room) break;
    const key = prefix + (kv.key ?? '');
    if (!kv.key || key.length > MAX_NAME || key in into) continue;
    const v = storable(kv.value);
    if (v === null) continue;
    into[key] = v;
    n++;
  }
  return into;
}

/** The raw value of one attribute (for the fields lifted out of gen_ai.* attributes). */
export function attrLookup(list: KeyValue[] | null | undefined): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const kv of list ?? []) if (kv.key) m.set(kv.key, plain(kv.value));
  return m;
}
