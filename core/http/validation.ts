import { z } from 'zod';
import type { ValidationIssue } from '../errors';

export type Location = 'path' | 'query' | 'body' | 'response';

type Issue = z.core.$ZodIssue;
type Path = Array<string | number>;

/**
 * zod issues in FastAPI's shape and words: [{loc, msg, type}], with pydantic's error types
 * (`missing`, `string_type`, `int_parsing`, `greater_than_equal`, `enum`, ...), so that a
 * client written against the FastAPI service reads our 422s unchanged.
 *
 * `value` is what was validated: zod 4 issues carry no input (unless parsed with
 * reportInput), and whether a key is absent (`missing`) or present with the wrong type, and
 * whether a number arrived as a string (`*_parsing`), can only be read from it.
 */
export function toIssues(where: Location, error: { issues: readonly Issue[] }, value: unknown, schema?: z.ZodType): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of error.issues) translate(issue, [where], value, schema, out);
  return out;
}

function translate(issue: Issue, prefix: Path, root: unknown, schema: z.ZodType | undefined, out: ValidationIssue[]): void {
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const loc = [...prefix, ...path];
  const at = lookup(root, path);
  const push = (type: string, msg: string, where: Path = loc): void => void out.push({ loc: where, msg: authored(issue) ?? msg, type });
  // Only an absent key is `missing`; a present one of the wrong type or value says so.
  const absent = !at.present && (issue.code === 'invalid_type' || issue.code === 'invalid_value' || (issue.code === 'invalid_union' && !issue.discriminator));
  if (absent) return void out.push({ loc, msg: 'Field required', type: 'missing' });
  switch (issue.code) {
    case 'invalid_type':
      // zod checks `number` before `.int()`: "x" for an integer field says expected number.
      return void out.push({ loc, ...typeError(issue.expected === 'number' && wantsInt(schemaAt(schema, path)) ? 'int' : issue.expected, at.value, (issue as { received?: string }).received) });
    case 'too_small':
    case 'too_big':
      return void push(...sizeError(issue, at.value));
    case 'invalid_value': {
      const vals = issue.values;
      if ((issue as { expected?: string }).expected === 'stringbool') return push('bool_parsing', 'Input should be a valid boolean, unable to interpret input');
      return vals.length === 1 ? push('literal_error', `Input should be ${choices(vals)}`) : push('enum', `Input should be ${choices(vals)}`);
    }
    case 'invalid_format':
      return void push(...formatError(issue));
    case 'not_multiple_of':
      return push('multiple_of', `Input should be a multiple of ${issue.divisor}`);
    case 'unrecognized_keys':
      for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      return;
    case 'invalid_union': {
      if (issue.discriminator) {
        // zod's path ends at the discriminator key; pydantic names the union itself.
        const unionLoc = path[path.length - 1] === issue.discriminator ? loc.slice(0, -1) : loc;
        const tag = lookup(root, [...path.slice(0, -1), issue.discriminator]);
        const tags = choices((issue as { options?: unknown[] }).options ?? []);
        if (!tag.present) return push('union_tag_not_found', `Unable to extract tag using discriminator '${issue.discriminator}'`, unionLoc);
        return push('union_tag_invalid', `Input tag ${repr(tag.value)} found using '${issue.discriminator}' does not match any of the expected tags: ${tags}`, unionLoc);
      }
      // Every alternative's complaint, as pydantic lists them (without its type tags in loc).
      const inner = at.value;
      for (const branch of issue.errors) for (const i of branch) translate(i, loc, inner, undefined, out);
      if (issue.errors.length === 0) push('union_error', 'Input matches more than one alternative');
      return;
    }
    case 'invalid_key':
      for (const i of issue.issues) translate(i, [...loc, '[key]'], path[path.length - 1], undefined, out);
      return;
    case 'invalid_element':
      for (const i of issue.issues) translate(i, loc, at.value, undefined, out);
      return;
    case 'custom':
      return void out.push({ loc, msg: issue.message, type: 'value_error' });
    default:
      return void out.push({ loc, msg: (issue as Issue).message, type: 'value_error' });
  }
}

/** A message the schema's author wrote (`.regex(re, 'a node id such as trading-1')`), or null. */
function authored(issue: Issue): string | null {
  const fallback = z.config().localeError?.(issue as never);
  const text = typeof fallback === 'string' ? fallback : fallback?.message;
  return text === undefined || text === issue.message ? null : issue.message;
}

function typeError(expected: string, value: unknown, received?: string): { type: string; msg: string } {
  const text = typeof value === 'string';
  switch (expected) {
    case 'string':
      return { type: 'string_type', msg: 'Input should be a valid string' };
    case 'int':
    case 'bigint':
      if (text) return { type: 'int_parsing', msg: 'Input should be a valid integer, unable to parse string as an integer' };
      if (typeof value === 'number') return { type: 'int_from_float', msg: 'Input should be a valid integer, got a number with a fractional part' };
      return { type: 'int_type', msg: 'Input should be a valid integer' };
    case 'number':
      if (received === 'Infinity') return { type: 'finite_number', msg: 'Input should be a finite number' };
      if (text) return { type: 'float_parsing', msg: 'Input should be a valid number, unable to parse string as a number' };
      return { type: 'float_type', msg: 'Input should be a valid number' };
    case 'boolean':
      if (text) return { type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input' };
      return { type: 'bool_type', msg: 'Input should be a valid boolean' };
    case 'array':
    case 'tuple':
      return { type: 'list_type', msg: 'Input should be a valid list' };
    case 'set':
      return { type: 'set_type', msg: 'Input should be a valid set' };
    case 'object':
      return { type: 'model_attributes_type', msg: 'Input should be a valid dictionary or object to extract fields from' };
    case 'record':
    case 'map':
      return { type: 'dict_type', msg: 'Input should be a valid dictionary' };
    case 'null':
      return { type: 'none_required', msg: 'Input should be None' };
    case 'date':
      return { type: 'datetime_type', msg: 'Input should be a valid datetime' };
    default:
      return { type: `${expected}_type`, msg: `Input should be a valid ${expected}` };
  }
}

function sizeError(issue: Extract<Issue, { code: 'too_small' | 'too_big' }>, value: unknown): [string, string] {
  const small = issue.code === 'too_small';
  const limit = small ? (issue as { minimum: number | bigint }).minimum : (issue as { maximum: number | bigint }).maximum;
  const n = Number(limit);
  const plural = n === 1 ? '' : 's';
  switch (issue.origin) {
    case 'string':
      return small ? ['string_too_short', `String should have at least ${limit} character${plural}`] : ['string_too_long', `String should have at most ${limit} character${plural}`];
    case 'array':
    case 'set':
    case 'file': {
      const kind = issue.origin === 'array' ? 'List' : issue.origin === 'set' ? 'Set' : 'File';
      const size = Array.isArray(value) ? `, not ${value.length}` : '';
      return small ? ['too_short', `${kind} should have at least ${limit} item${plural} after validation${size}`] : ['too_long', `${kind} should have at most ${limit} item${plural} after validation${size}`];
    }
    default: {
      const shown = issue.origin === 'date' ? new Date(n).toISOString() : String(limit);
      if (small) return issue.inclusive ? ['greater_than_equal', `Input should be greater than or equal to ${shown}`] : ['greater_than', `Input should be greater than ${shown}`];
      return issue.inclusive ? ['less_than_equal', `Input should be less than or equal to ${shown}`] : ['less_than', `Input should be less than ${shown}`];
    }
  }
}

function formatError(issue: Extract<Issue, { code: 'invalid_format' }>): [string, string] {
  switch (issue.format) {
    case 'regex':
      return ['string_pattern_mismatch', `String should match pattern '${(issue.pattern ?? '').replace(/^\/(.*)\/[a-z]*$/, '$1')}'`];
    case 'uuid':
    case 'guid':
      return ['uuid_parsing', 'Input should be a valid UUID'];
    case 'email':
      return ['value_error', 'value is not a valid email address'];
    case 'url':
      return ['url_parsing', 'Input should be a valid URL'];
    case 'datetime':
      return ['datetime_parsing', 'Input should be a valid datetime'];
    case 'date':
      return ['date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'];
    case 'time':
      return ['time_parsing', 'Input should be in a valid time format'];
    case 'ipv4':
      return ['ip_v4_address', 'Input is not a valid IPv4 address'];
    case 'ipv6':
      return ['ip_v6_address', 'Input is not a valid IPv6 address'];
    case 'starts_with':
      return ['string_pattern_mismatch', `String should start with ${repr((issue as { prefix?: string }).prefix)}`];
    case 'ends_with':
      return ['string_pattern_mismatch', `String should end with ${repr((issue as { suffix?: string }).suffix)}`];
    case 'includes':
      return ['string_pattern_mismatch', `String should include ${repr((issue as { includes?: string }).includes)}`];
    default:
      return ['value_error', `Value error, not a valid ${issue.format}`];
  }
}

/** pydantic's way of listing allowed values: 'a', 'b' or 'c'. */
function choices(values: readonly unknown[]): string {
  const shown = values.map(repr);
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

function repr(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

/** The schema that validates the value at `path`, through wrappers (optional, default, pipe, ...); undefined when unsure. */
function schemaAt(schema: z.ZodType | undefined, path: Path): z.ZodType | undefined {
  let cur = unwrap(schema);
  for (const key of path) {
    const def = cur?._zod.def as { type?: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; items?: z.ZodType[] } | undefined;
    if (def?.type === 'object' && typeof key === 'string') cur = unwrap(def.shape?.[key]);
    else if (def?.type === 'array') cur = unwrap(def.element);
    else if (def?.type === 'record') cur = unwrap(def.valueType);
    else if (def?.type === 'tuple' && typeof key === 'number') cur = unwrap(def.items?.[key]);
    else return undefined;
  }
  return cur;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let cur = schema;
  for (let i = 0; cur && i < 16; i++) {
    const def = cur._zod.def as { type: string; innerType?: z.ZodType; in?: z.ZodType };
    if (def.innerType) cur = def.innerType;
    else if (def.type === 'pipe' && def.in) cur = def.in;
    else break;
  }
  return cur;
}

function wantsInt(schema: z.ZodType | undefined): boolean {
  const format = (schema as { format?: unknown } | undefined)?.format;
  return typeof format === 'string' && /int/.test(format);
}

/** The value at `path` in what was validated, and whether its key is there at all. */
function lookup(root: unknown, path: Path): { present: boolean; value: unknown } {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return { present: false, value: undefined };
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return { present: cur !== undefined, value: cur };
}

/** Parses one part of a request; collects issues instead of throwing. */
export function parsePart(
  schema: z.ZodType | undefined,
  value: unknown,
  where: Location,
  issues: ValidationIssue[],
): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  issues.push(...toIssues(where, result.error, value, schema));
  return undefined;
}

/**
 * A string anywhere in the request (path, query, body, or an object key) holding U+0000.
 * PostgreSQL stores neither it in text nor `\u0000` in jsonb, so such a value would fail at
 * the database after the handler had begun; it is refused up front, on every store alike.
 * Only requests that can hold one are walked: `%00` in the URL, `\u0000` in a JSON body.
 */
export function nulIssues(req: { originalUrl: string; params: unknown; query: unknown; body: unknown; rawBody?: string }, issues: ValidationIssue[]): void {
  if (req.originalUrl.includes('%00')) {
    findNul(req.params, ['path'], issues);
    findNul(req.query, ['query'], issues);
  }
  if (req.rawBody === undefined ? req.body !== undefined : req.rawBody.includes('\\u0000')) findNul(req.body, ['body'], issues);
}

function findNul(value: unknown, at: Array<string | number>, issues: ValidationIssue[]): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) issues.push({ loc: at, msg: 'must not contain the NUL character (U+0000)', type: 'value_error.nul' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => findNul(v, [...at, i], issues));
  } else if (ArrayBuffer.isView(value)) {
    // Bytes (a body a parser kept raw) are not text.
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) issues.push({ loc: [...at, k], msg: 'a key must not contain the NUL character (U+0000)', type: 'value_error.nul' });
      findNul(v, [...at, k], issues);
    }
  }
}
