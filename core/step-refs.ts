// The reference syntax of step inputs, shared by the workflows plugin and /uaicp/workflows/execute: `${steps.<id>.output}` or `${steps.<id>.output.<path>}`,
// where <path> is dot-separated object keys or array indexes (`rows.0.value`).
// A string that is exactly one reference is replaced by the referenced value (any JSON type);
// references inside a longer string are replaced by their text (JSON for objects and arrays).

const REF = /\$\{([^}]*)\}/g;
const FORM = /^steps\.([a-z][a-z0-9_]{0,63})\.output((?:\.[A-Za-z0-9_-]+)*)$/;

export interface Ref {
  /** The whole `${...}` text. */
  text: string;
  step: string;
  path: string[];
}

export type Path = Array<string | number>;

/** Every reference in one string; a `${...}` that is not of the form is an error message. */
export function refsIn(s: string): { refs: Ref[]; errors: string[] } {
  const refs: Ref[] = [];
  const errors: string[] = [];
  for (const m of s.matchAll(REF)) {
    const f = FORM.exec(m[1].trim());
    if (!f) errors.push(`"${m[0]}" is not a reference of the form \${steps.<id>.output[.<path>]}`);
    else refs.push({ text: m[0], step: f[1], path: f[2] ? f[2].slice(1).split('.') : [] });
  }
  return { refs, errors };
}

/** Every string holding references, with its place in the input. */
export function walk(value: unknown, at: Path = [], out: Array<{ at: Path; refs: Ref[]; errors: string[] }> = []) {
  if (typeof value === 'string') {
    if (value.includes('${')) out.push({ at, ...refsIn(value) });
  } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, [...at, k], out);
  return out;
}

export class RefError extends Error {}

function lookup(outputs: Map<string, unknown>, ref: Ref): unknown {
  if (!outputs.has(ref.step)) throw new RefError(`${ref.text}: step "${ref.step}" has no output`);
  let v = outputs.get(ref.step);
  for (const key of ref.path) {
    if (Array.isArray(v) && /^\d+$/.test(key) && Number(key) < v.length) v = v[Number(key)];
    else if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, key)) v = (v as Record<string, unknown>)[key];
    else throw new RefError(`${ref.text}: the output of step "${ref.step}" has nothing at "${ref.path.join('.')}"`);
  }
  return v;
}

/** The input with every reference replaced by the value from earlier steps' outputs. */
export function resolve(value: unknown, outputs: Map<string, unknown>): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    const { refs } = refsIn(value);
    if (refs.length === 1 && refs[0].text === value) return lookup(outputs, refs[0]);
    return value.replace(REF, (whole, inner: string) => {
      const f = FORM.exec(inner.trim());
      if (!f) return whole;
      const v = lookup(outputs, { text: whole, step: f[1], path: f[2] ? f[2].slice(1).split('.') : [] });
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, outputs));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, outputs)]));
  return value;
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; additionalProperties?: boolean | JsonSchema; items?: JsonSchema | JsonSchema[]; prefixItems?: JsonSchema[]; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[] };

/**
 * Whether `path` can exist in a value of a task's output JSON schema (from the kernel's
 * catalogue): null when it can, else why not. A schema that does not say (no type, open
 * objects) admits any key.
 */
export function pathError(schema: JsonSchema, path: string[], seen: string[] = []): string | null {
  if (!path.length) return null;
  const here = ['output', ...seen].join('.');
  const [key, ...rest] = path as [string, ...string[]];
  const options = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (options) {
    const errs = options.map((o) => pathError(o, path, seen));
    return errs.some((e) => e === null) ? null : errs[0]!;
  }
  const types = schema.type === undefined ? null : [schema.type].flat();
  if (types === null) return null;
  if (types.includes('object')) {
    if (schema.properties && Object.hasOwn(schema.properties, key)) return pathError(schema.properties[key]!, rest, [...seen, key]);
    const extra = schema.additionalProperties;
    if (extra === undefined || extra === true) return null;
    if (extra && typeof extra === 'object') return pathError(extra, rest, [...seen, key]);
    return `${here} has no key "${key}" (keys: ${Object.keys(schema.properties ?? {}).join(', ') || 'none'})`;
  }
  if (types.includes('array')) {
    if (!/^\d+$/.test(key)) return `${here} is a list: "${key}" is not an index`;
    const item = Array.isArray(schema.items) ? schema.items[Number(key)] : (schema.prefixItems?.[Number(key)] ?? schema.items);
    return item ? pathError(item, rest, [...seen, key]) : null;
  }
  return `${here} is a ${types.join(' or ')}: it has no "${key}"`;
}
