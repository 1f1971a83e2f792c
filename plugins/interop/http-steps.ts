import { Ajv, type ValidateFunction } from 'ajv';
import type { Config } from '../../core/config';
import type { StepType } from '../../core/contracts/workflows';
import type { Db } from '../../core/db';
import { HttpError, type ValidationIssue } from '../../core/errors';
import type { Caller } from '../../core/roles';
import type { Operation } from './operations';

// Workflow steps that call an imported OpenAPI operation: `{kernel: 'http', task:
// '<api name>.<operationId>', input: {path?, query?, headers?, body?}}`. The operation is looked
// up in the caller's tenant when the step runs (a definition may name an API imported later);
// its parameters and request body are checked against the imported schemas before the call.

const TASK = /^([a-z][a-z0-9_-]{0,99})\.(.{1,200})$/;
const PARTS = ['path', 'query', 'headers', 'body'];
type Input = { path?: Record<string, unknown>; query?: Record<string, unknown>; headers?: Record<string, unknown>; body?: unknown };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const scalar = (v: unknown): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

/** A parameter's text; a reference resolved to an object or array is refused when the step runs. */
function paramText(v: unknown, what: string): string {
  if (!scalar(v)) throw new Error(`${what} must be a string, number or boolean, not ${JSON.stringify(v)?.slice(0, 100)}`);
  return String(v);
}

/** 502: the outside API failed or could not be reached (the runner retries it when the step allows). */
const upstream = (detail: string) => new HttpError(502, detail, {}, 'UPSTREAM_FAILED');

export function httpStepType(db: Db, interop: Config['interop']): StepType {
  const config = interop.httpSteps;
  const ajv = new Ajv({ strict: false, allErrors: true });
  const compiled = new Map<string, ValidateFunction>();
  const validator = (op: Operation, schema: object) => {
    const key = `${op.id}`;
    let v = compiled.get(key);
    if (!v) {
      v = ajv.compile(schema);
      // Operations are replaced on re-import (new ids), so old entries only cost memory: bound it.
      if (compiled.size >= 1000) compiled.clear();
      compiled.set(key, v);
    }
    return v;
  };

  return {
    name: 'http',
    check(task, input) {
      const issues: ValidationIssue[] = [];
      if (!TASK.test(task)) issues.push({ loc: ['task'], msg: 'an http step names `<api name>.<operationId>` of an imported API', type: 'value_error' });
      if (input === undefined || (isObject(input) && !Object.keys(input).length)) return issues;
      if (!isObject(input)) return [...issues, { loc: ['input'], msg: 'an object with path, query, headers and body', type: 'type_error' }];
      for (const [k, v] of Object.entries(input)) {
        if (!PARTS.includes(k)) issues.push({ loc: ['input', k], msg: `unknown part; an http step's input has ${PARTS.join(', ')}`, type: 'extra_forbidden' });
        else if (k !== 'body' && typeof v !== 'string' && !isObject(v)) issues.push({ loc: ['input', k], msg: 'an object of parameter values', type: 'type_error' });
        else if (k !== 'body' && isObject(v)) for (const [name, x] of Object.entries(v)) if (!scalar(x)) issues.push({ loc: ['input', k, name], msg: 'a string, number or boolean', type: 'type_error' });
      }
      return issues;
    },

    async run(caller: Caller, task, raw, { signal, timeoutMs }) {
      const [, api, operationId] = TASK.exec(task)!;
      const row = await db('interop_operations').where({ tenant_id: caller.tenantId, api_name: api, operation_id: operationId }).first();
      if (!row) throw new Error(`no imported operation "${operationId}" of API "${api}" in this tenant (POST /interop/import/openapi3)`);
      const op: Operation = { ...row, schemas: typeof row.schemas === 'string' ? JSON.parse(row.schemas) : row.schemas };
      const input = (raw ?? {}) as Input;
      const url = new URL(op.url.replace(/\{([^}]+)\}/g, (_, name: string) => (input.path?.[name] === undefined ? `{${name}}` : encodeURIComponent(paramText(input.path[name], `path parameter "${name}"`)))));
      const allowed = interop.allowedHosts;
      if (!allowed.includes(url.host) && !allowed.includes(url.hostname)) {
        throw new Error(`host ${url.host} is not in interop.allowedHosts (${allowed.length ? allowed.join(', ') : 'empty: http steps may call no host'})`);
      }
      const missing: string[] = [];
      const headers: Record<string, string> = { accept: 'application/json' };
      for (const p of op.schemas.params as Array<{ name: string; in: string; required: boolean }>) {
        const bag = p.in === 'path' ? input.path : p.in === 'query' ? input.query : p.in === 'header' ? input.headers : undefined;
        const value = bag?.[p.name];
        if (value === undefined) {
          if (p.required || p.in === 'path') missing.push(`${p.in} parameter "${p.name}"`);
          continue;
        }
        if (p.in === 'query') url.searchParams.set(p.name, paramText(value, `query parameter "${p.name}"`));
        if (p.in === 'header') headers[p.name.toLowerCase()] = paramText(value, `header "${p.name}"`);
      }
      if (missing.length) throw new Error(`missing ${missing.join(', ')} of ${op.method} ${op.url}`);
      let body: string | undefined;
      if (op.schemas.request_body) {
        const check = validator(op, op.schemas.request_body);
        if (!check(input.body)) throw new Error(`the body does not match the operation's schema: ${ajv.errorsText(check.errors, { dataVar: 'body' })}`);
        body = JSON.stringify(input.body);
        headers['content-type'] = 'application/json';
      } else if (input.body !== undefined) throw new Error(`${op.method} ${op.url} takes no JSON body`);

      const timeout = AbortSignal.timeout(timeoutMs ?? config.timeoutMs);
      let res: Response;
      try {
        res = await fetch(url, { method: op.method, headers, body, signal: AbortSignal.any([signal, timeout]), redirect: 'manual' });
      } catch (err) {
        if (signal.aborted) throw err;
        throw upstream(`${op.method} ${url.origin}${url.pathname} failed: ${timeout.aborted ? 'timed out' : (err as Error).message}`);
      }
      const text = await readCapped(res, config.maxResponseBytes);
      const type = res.headers.get('content-type') ?? '';
      const parsed = /json/i.test(type) && text ? safeJson(text) : text;
      if (res.status >= 500) throw upstream(`${op.method} ${url.pathname} answered ${res.status}: ${text.slice(0, 300)}`);
      if (res.status >= 300) throw new Error(`${op.method} ${url.pathname} answered ${res.status}: ${text.slice(0, 300)}`);
      return { status: res.status, content_type: type || null, body: parsed };
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function readCapped(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) throw upstream(`the answer is larger than interop.httpSteps.maxResponseBytes (${max})`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
