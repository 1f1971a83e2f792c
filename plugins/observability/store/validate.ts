import type { ValidationIssue } from '../../../core/errors';

// A small, fast validator for ingested events. Ingest checks tens of thousands of events a
// second, so each kind is a table of field rules checked in one pass (about 1 µs an event,
// where a general schema library costs ten times more); issues have FastAPI's shape.

export type Rule =
  | { t: 'str'; min: number; max: number; re?: RegExp; reMsg?: string }
  | { t: 'hex'; len: number; nullable?: boolean }
  | { t: 'int'; min: number; max: number }
  | { t: 'num'; min: number; max: number }
  | { t: 'bool' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'iso' }
  | { t: 'strs'; maxItems: number; maxLen: number }
  | { t: 'attrs' };

export interface Field {
  rule: Rule;
  required?: boolean;
  default?: unknown;
}

export type Spec = Record<string, Field>;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const ZEROS = /^0+$/;
const HEX: Record<number, RegExp> = { 16: /^[0-9a-fA-F]{16}$/, 32: /^[0-9a-fA-F]{32}$/ };
const MAX_ATTRS = 64;

function checkAttrValue(v: unknown): string | null {
  switch (typeof v) {
    case 'string':
      return v.length <= 4096 ? null : 'string values hold at most 4096 characters';
    case 'number':
      return Number.isFinite(v) ? null : 'numbers must be finite';
    case 'boolean':
      return null;
    default:
      if (!Array.isArray(v)) return 'a value is a string, number, boolean or a list of those';
      if (v.length > 64) return 'lists hold at most 64 items';
      for (const x of v) {
        if (typeof x === 'string' ? x.length > 1024 : typeof x === 'number' ? !Number.isFinite(x) : typeof x !== 'boolean') {
          return 'list items are strings (at most 1024 characters), finite numbers or booleans';
        }
      }
      return null;
  }
}

/** The message for a value that breaks its rule, or null when it is good. */
function check(rule: Rule, v: unknown): [string, string] | null {
  switch (rule.t) {
    case 'str':
      if (typeof v !== 'string') return ['string_type', 'Input should be a valid string'];
      if (v.length < rule.min) return ['string_too_short', `String should have at least ${rule.min} character${rule.min === 1 ? '' : 's'}`];
      if (v.length > rule.max) return ['string_too_long', `String should have at most ${rule.max} characters`];
      if (rule.re && !rule.re.test(v)) return ['string_pattern_mismatch', rule.reMsg ?? `String should match ${rule.re.source}`];
      return null;
    case 'hex':
      if (v === null && rule.nullable) return null;
      if (typeof v !== 'string' || !HEX[rule.len].test(v)) return ['string_pattern_mismatch', `Should be ${rule.len} hex characters`];
      if (ZEROS.test(v)) return ['value_error', 'Must not be all zeros'];
      return null;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) return ['int_type', 'Input should be a valid integer'];
      if (v < rule.min) return ['greater_than_equal', `Input should be greater than or equal to ${rule.min}`];
      if (v > rule.max) return ['less_than_equal', `Input should be less than or equal to ${rule.max}`];
      return null;
    case 'num':
      if (typeof v !== 'number' || !Number.isFinite(v)) return ['float_type', 'Input should be a valid number'];
      if (v < rule.min) return ['greater_than_equal', `Input should be greater than or equal to ${rule.min}`];
      if (v > rule.max) return ['less_than_equal', `Input should be less than or equal to ${rule.max}`];
      return null;
    case 'bool':
      return typeof v === 'boolean' ? null : ['bool_type', 'Input should be a valid boolean'];
    case 'enum':
      return typeof v === 'string' && rule.values.includes(v) ? null : ['enum', `Input should be ${rule.values.map((x) => `'${x}'`).join(', ')}`];
    case 'iso': {
      if (typeof v !== 'string' || !ISO.test(v)) return ['datetime_type', 'Input should be an ISO 8601 date-time with a zone (Z or ±hh:mm)'];
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) return ['datetime_type', 'Input should be a valid date-time'];
      if (ms < Date.UTC(2000, 0, 1) || ms > Date.now() + 86_400_000) return ['value_error', 'Timestamp should lie between 2000-01-01 and one day from now'];
      return null;
    }
    case 'strs':
      if (!Array.isArray(v)) return ['list_type', 'Input should be a valid list'];
      if (v.length > rule.maxItems) return ['too_long', `List should have at most ${rule.maxItems} items`];
      for (const x of v) if (typeof x !== 'string' || x.length < 1 || x.length > rule.maxLen) return ['string_type', `Items should be strings of 1-${rule.maxLen} characters`];
      return null;
    case 'attrs': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['dict_type', 'Input should be a valid dictionary'];
      let n = 0;
      for (const k in v) {
        if (++n > MAX_ATTRS) return ['too_long', `At most ${MAX_ATTRS} attributes`];
        if (k.length > 128) return ['value_error', 'Attribute names hold at most 128 characters'];
        const bad = checkAttrValue((v as Record<string, unknown>)[k]);
        if (bad) return ['value_error', `${k}: ${bad}`];
      }
      return null;
    }
  }
}

/**
 * Checks an event against its spec. Returns the event with defaults filled in, or the
 * issues (loc relative to `loc`). Unknown fields are refused, so that typos are seen.
 */
export function validate(spec: Spec, keys: string[], input: unknown, loc: Array<string | number>): { value?: Record<string, unknown>; issues: ValidationIssue[] } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { issues: [{ loc, msg: 'Input should be a valid dictionary', type: 'dict_type' }] };
  }
  const obj = input as Record<string, unknown>;
  let issues: ValidationIssue[] | null = null;
  const add = (field: string, type: string, msg: string) => (issues ??= []).push({ loc: [...loc, field], msg, type });
  for (const k in obj) {
    const f = spec[k];
    if (!f) {
      add(k, 'extra_forbidden', 'Extra inputs are not permitted');
      continue;
    }
    const v = obj[k];
    if (v === undefined) continue;
    if (v === null && !f.required) {
      // An optional field sent as null is treated as left out (defaults then apply).
      delete obj[k];
      continue;
    }
    const bad = check(f.rule, v);
    if (bad) add(k, bad[0], bad[1]);
  }
  const defaults: Array<[string, unknown]> = [];
  for (const k of keys) {
    const f = spec[k];
    if (obj[k] !== undefined) continue;
    if (f.required) add(k, 'missing', 'Field required');
    else if (f.default !== undefined) defaults.push([k, f.default]);
  }
  if (issues) return { issues };
  // The input is the request's own parsed JSON, so defaults are filled in place.
  for (const [k, v] of defaults) obj[k] = v;
  return { value: obj, issues: [] };
}

type Json = Record<string, unknown>;

/** The JSON Schema of one rule: what `check` accepts, for the OpenAPI document. */
function ruleSchema(rule: Rule): Json {
  switch (rule.t) {
    case 'str':
      return { type: 'string', minLength: rule.min, maxLength: rule.max, ...(rule.re ? { pattern: rule.re.source } : {}) };
    case 'hex':
      return { type: rule.nullable ? ['string', 'null'] : 'string', pattern: `^[0-9a-fA-F]{${rule.len}}$`, description: 'hex, not all zeros' };
    case 'int':
      return { type: 'integer', minimum: rule.min, maximum: rule.max };
    case 'num':
      return { type: 'number', minimum: rule.min, maximum: rule.max };
    case 'bool':
      return { type: 'boolean' };
    case 'enum':
      return { type: 'string', enum: [...rule.values] };
    case 'iso':
      return { type: 'string', format: 'date-time', description: 'with a zone (Z or ±hh:mm), from 2000-01-01 to one day from now' };
    case 'strs':
      return { type: 'array', maxItems: rule.maxItems, items: { type: 'string', minLength: 1, maxLength: rule.maxLen } };
    case 'attrs': {
      const scalar = [{ type: 'number' }, { type: 'boolean' }];
      return {
        type: 'object',
        maxProperties: MAX_ATTRS,
        propertyNames: { maxLength: 128 },
        additionalProperties: {
          anyOf: [
            { type: 'string', maxLength: 4096 },
            ...scalar,
            { type: 'array', maxItems: 64, items: { anyOf: [{ type: 'string', maxLength: 1024 }, ...scalar] } },
          ],
        },
      };
    }
  }
}

/** An optional field sent as null counts as left out, so the schema admits null too. */
function orNull(s: Json): Json {
  if (Array.isArray(s.type)) return s;
  return { ...s, type: [s.type, 'null'], ...(Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {}) };
}

/** The JSON Schema of a spec, generated from the same rule table `validate` checks. */
export function specSchema(spec: Spec): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(spec)) {
    const s = ruleSchema(field.rule);
    if (field.required) required.push(name);
    properties[name] = field.required ? s : { ...orNull(s), ...(field.default !== undefined ? { default: field.default } : {}) };
  }
  return { type: 'object', properties, required, additionalProperties: false };
}
