import crypto from 'node:crypto';

type Json = Record<string, any>;

/**
 * A small value that satisfies a JSON schema as our OpenAPI document writes them (zod's
 * output): required properties only, the first enum value, minimum lengths and bounds. Good
 * enough to get a request past validation to the handler; not a general generator.
 */
export function sample(schema: Json | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return undefined;
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const k of ['oneOf', 'anyOf'] as const) if (Array.isArray(schema[k])) return sample(schema[k].find((s: Json) => s.type !== 'null') ?? schema[k][0], depth + 1);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Json) => sample(s, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const name of (schema.required ?? []) as string[]) out[name] = sample(schema.properties?.[name], depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items, depth + 1));
    case 'integer':
    case 'number': {
      const lo = schema.minimum ?? (typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1);
      return Math.min(Math.max(lo, 1), schema.maximum ?? Number.MAX_SAFE_INTEGER);
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string':
      return sampleString(schema);
    default:
      return schema.properties ? sample({ ...schema, type: 'object' }, depth) : undefined;
  }
}

function sampleString(s: Json): string {
  switch (s.format) {
    case 'email':
      return 'isolation-probe@example.test';
    case 'uuid':
      return crypto.randomUUID();
    case 'date-time':
      return new Date().toISOString();
    case 'uri':
    case 'url':
      return 'https://example.test/probe';
    default:
  }
  const base = s.pattern && /\[a-z\]/.test(s.pattern) ? 'probe' : s.pattern && /\^\\d|\[0-9\]/.test(s.pattern) ? '1' : 'isolation probe';
  const min = s.minLength ?? 0;
  let v = base.length >= min ? base : base + 'x'.repeat(min - base.length);
  if (s.maxLength !== undefined) v = v.slice(0, s.maxLength);
  return v;
}
