import crypto from 'node:crypto';
import type { Migration } from '../../core/db';
import type { TenantScope } from '../../core/tenancy';

export const interopMigrations: Migration[] = [
  {
    name: '001_interop_operations',
    async up(db) {
      await db.schema.createTable('interop_operations', (t) => {
        t.string('id', 36).primary();
        t.string('tenant_id', 64).notNullable();
        t.string('api_name', 100).notNullable();
        t.string('operation_id', 200).notNullable();
        t.string('method', 8).notNullable();
        t.text('url').notNullable();
        t.text('summary');
        // JSON: {params: [...], request_body: schema|null, responses: {status: schema}}
        t.text('schemas').notNullable();
        t.string('created_at', 32).notNullable();
        t.unique(['tenant_id', 'api_name', 'operation_id']);
      });
    },
  },
];

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export interface Operation {
  id: string;
  api_name: string;
  operation_id: string;
  method: string;
  url: string;
  summary: string | null;
  schemas: { params: Json[]; request_body: Json | null; responses: Record<string, Json | null> };
  created_at: string;
}

/** The operations of a dereferenced OpenAPI 3.x document, each an HTTP call with its schemas. */
export function operationsOf(doc: Json, apiName: string, baseUrl: string, now: string): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    const shared = (item.parameters ?? []) as Json[];
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const json = (c: Json | undefined) => (c?.content?.['application/json']?.schema as Json | undefined) ?? null;
      out.push({
        id: crypto.randomUUID(),
        api_name: apiName,
        operation_id: String(op.operationId ?? `${method}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`).slice(0, 200),
        method: method.toUpperCase(),
        url: baseUrl.replace(/\/+$/, '') + path,
        summary: (op.summary as string | undefined) ?? null,
        schemas: {
          params: [...shared, ...((op.parameters ?? []) as Json[])].map((p) => ({ name: p.name, in: p.in, required: Boolean(p.required), schema: p.schema ?? null })),
          request_body: json(op.requestBody),
          responses: Object.fromEntries(Object.entries((op.responses ?? {}) as Json).map(([status, r]) => [status, json(r as Json)])),
        },
        created_at: now,
      });
    }
  }
  return out;
}

/** Replaces the operations of one API name (a re-import is the new version of that API). */
export async function saveOperations(scope: TenantScope, db: import('knex').Knex, apiName: string, ops: Operation[]): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('interop_operations').where({ tenant_id: scope.tenantId, api_name: apiName }).delete();
    const rows = ops.map((o) => ({ ...o, tenant_id: scope.tenantId, schemas: JSON.stringify(o.schemas) }));
    for (let i = 0; i < rows.length; i += 100) await trx('interop_operations').insert(rows.slice(i, i + 100));
  });
}
