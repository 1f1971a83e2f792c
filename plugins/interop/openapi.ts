import SwaggerParser from '@apidevtools/swagger-parser';

type Json = Record<string, any>;

// JSON Schema 2020-12 keywords OpenAPI 3.0's Schema Object does not have; dropped (they only
// narrow what is valid, so the 3.0 schema accepts a superset of what the 3.1 one does).
const DROP = ['$schema', '$id', '$comment', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'dependentRequired', 'dependentSchemas', 'if', 'then', 'else', 'contentEncoding', 'contentMediaType', 'contentSchema', 'patternProperties', 'prefixItems', 'contains', 'minContains', 'maxContains', '$anchor', '$dynamicRef', '$dynamicAnchor'];

/** One JSON Schema (2020-12, as OpenAPI 3.1 uses) as an OpenAPI 3.0 Schema Object. */
export function downSchema(s: unknown, defs: Map<string, string>): unknown {
  if (Array.isArray(s)) return s.map((x) => downSchema(x, defs));
  if (!s || typeof s !== 'object') return s;
  const src = s as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (DROP.includes(k) || k === '$defs') continue;
    if (k === '$ref' && typeof v === 'string') {
      const m = /^#\/\$defs\/(.+)$/.exec(v);
      out.$ref = m ? `#/components/schemas/${defs.get(m[1]!) ?? m[1]}` : v;
    } else if (['properties'].includes(k)) {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, downSchema(ps, defs)]));
    } else out[k] = downSchema(v, defs);
  }
  if ('prefixItems' in src && !('items' in src)) out.items = {};
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  if (Array.isArray(out.examples)) {
    if (out.examples.length) out.example = out.examples[0];
    delete out.examples;
  }
  for (const [ex, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[ex] === 'number') {
      out[bound] = out[ex];
      out[ex] = true;
    }
  }
  if (Array.isArray(out.type)) {
    const types = out.type.filter((t: string) => t !== 'null');
    if (types.length < out.type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else {
      delete out.type;
      if (types.length > 1) out.anyOf = types.map((t: string) => ({ type: t }));
    }
  }
  if (out.type === 'null') {
    delete out.type;
    out.nullable = true;
    out.enum = [null];
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = out[key] as Json[] | undefined;
    if (!Array.isArray(list)) continue;
    const rest = list.filter((x) => !(x && x.type === 'null' && Object.keys(x).length === 1) && !(x && x.nullable && Array.isArray(x.enum) && x.enum.length === 1 && x.enum[0] === null));
    if (rest.length === list.length) continue;
    out.nullable = true;
    if (rest.length === 1 && !rest[0]!.$ref) {
      delete out[key];
      Object.assign(out, rest[0], { nullable: true });
    } else out[key] = rest;
  }
  return out;
}

/** Our OpenAPI 3.1 document as OpenAPI 3.0.3. */
export function downConvert(doc31: Json): Json {
  const doc = structuredClone(doc31);
  const defs = new Map<string, string>();
  const hoisted: Json = {};
  // Schemas a route shares by $defs are hoisted into components so their $refs still resolve.
  const hoist = (s: unknown): void => {
    if (!s || typeof s !== 'object') return;
    if (Array.isArray(s)) return s.forEach(hoist);
    const d = (s as Json).$defs as Json | undefined;
    if (d) for (const [name, schema] of Object.entries(d)) {
      defs.set(name, name);
      hoisted[name] = schema;
    }
    Object.values(s as Json).forEach(hoist);
  };
  hoist(doc.paths);
  const out: Json = {
    openapi: '3.0.3',
    info: { ...doc.info },
    servers: doc.servers,
    paths: downSchema(doc.paths, defs),
    components: {
      ...doc.components,
      schemas: Object.fromEntries(Object.entries({ ...(doc.components?.schemas ?? {}), ...hoisted }).map(([k, v]) => [k, downSchema(v, defs)])),
    },
  };
  delete out.info.license?.identifier;
  delete out.info.summary;
  return out;
}

export interface ValidationResult {
  valid: boolean;
  version: string | null;
  errors: Array<{ message: string; path: string | null }>;
}

/**
 * Validates a document with swagger-parser (its OpenAPI 2.0/3.0/3.1 schemas and its own
 * checks). External references are never followed: a document must not make us fetch URLs.
 */
export async function validateOpenApi(doc: unknown): Promise<ValidationResult> {
  const version = doc && typeof doc === 'object' ? String((doc as Json).openapi ?? (doc as Json).swagger ?? '') || null : null;
  try {
    await (SwaggerParser.validate(structuredClone(doc) as never, { resolve: { external: false, file: false, http: false } } as never) as unknown as Promise<unknown>);
    return { valid: true, version, errors: [] };
  } catch (err) {
    const e = err as Error & { details?: Array<{ message: string; instancePath?: string; path?: Array<string | number> }> };
    const errors = e.details?.length
      ? e.details.map((d) => ({ message: d.message, path: d.instancePath ?? (d.path ? '/' + d.path.join('/') : null) }))
      : [{ message: e.message, path: null }];
    return { valid: false, version, errors };
  }
}

/** A validated document dereferenced (internal references only). */
export async function dereference(doc: unknown): Promise<Json> {
  return (await (SwaggerParser.dereference(structuredClone(doc) as never, { resolve: { external: false, file: false, http: false } } as never) as unknown as Promise<unknown>)) as Json;
}
