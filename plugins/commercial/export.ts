import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { z } from 'zod';
import { NotFound } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { namedTenantScope } from '../../core/tenancy';
import type { Deps } from './index';

/** Columns that hold credentials' hashes: they stay out of an export. */
const SECRET_COLUMNS = new Set(['password_hash', 'key_hash', 'token_hash', 'secret_hash']);

/** One ustar header block. */
function tarHeader(name: string, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(512);
  const put = (text: string, offset: number, len: number) => h.write(text, offset, len, 'ascii');
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, '0') + '\0';
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(mtime, 12), 136, 12);
  put('        ', 148, 8);
  put('0', 156, 1);
  put('ustar\u000000', 257, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + ' ', 148, 8);
  return h;
}

/** A gzip'd tar of the files, in order. */
export function tarGz(files: Array<{ name: string; data: Buffer }>, mtime: number): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(tarHeader(f.name, f.data.length, mtime), f.data);
    const pad = (512 - (f.data.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(parts));
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const tableEntry = z.object({ table: z.string(), file: z.string(), rows: z.number().int(), bytes: z.number().int(), sha256: z.string(), omitted_columns: z.array(z.string()) });
const exportView = z.object({
  export_id: z.string(), tenant_id: z.string(), format: z.literal('tar.gz'), tables: z.array(tableEntry), rows: z.number().int(), bytes: z.number().int(), sha256: z.string(),
  download_url: z.string(), created_at: z.string(),
});

export function exportRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/compliance/export/{tenant_id}',
      summary: "Export every row the tenant owns in every table (admins): JSON lines per table in a tar.gz with a manifest of row counts and SHA-256 checksums; the export is logged",
      description: 'Credential hashes (password, key and token hashes) are left out and named in the manifest. Download with GET /compliance/export/{tenant_id}/{export_id}/download.',
      access: 'admin',
      feature: 'compliance',
      params: z.object({ tenant_id: z.string().min(1).max(64) }),
      response: exportView,
      status: 201,
      errors: [403, 404],
      handler: async ({ params, caller, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        if (!(await services.db('tenants').where({ id: scope.tenantId }).first('id'))) throw new NotFound('Tenant not found');
        const now = services.clock.now();
        const id = crypto.randomUUID();
        const files: Array<{ name: string; data: Buffer }> = [];
        const tables: Array<z.infer<typeof tableEntry>> = [];
        let rowsTotal = 0;
        for (const table of await services.usage.tenantTables()) {
          const rows = await services.db(table).where({ tenant_id: scope.tenantId });
          const omitted = new Set<string>();
          const lines = rows.map((r: Record<string, unknown>) => {
            for (const c of Object.keys(r)) if (SECRET_COLUMNS.has(c)) { omitted.add(c); delete r[c]; }
            return JSON.stringify(r);
          });
          const data = Buffer.from(lines.length ? lines.join('\n') + '\n' : '', 'utf8');
          files.push({ name: `${table}.jsonl`, data });
          tables.push({ table, file: `${table}.jsonl`, rows: rows.length, bytes: data.length, sha256: sha256(data), omitted_columns: [...omitted].sort() });
          rowsTotal += rows.length;
        }
        const manifest = { export_id: id, tenant_id: scope.tenantId, created_at: now.toISOString(), created_by: caller!.id, format: 'jsonl', tables };
        files.unshift({ name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest, null, 2) + '\n') });
        const archive = tarGz(files, Math.floor(now.getTime() / 1000));
        const dir = path.resolve(services.config.dataDir, 'exports', scope.tenantId);
        fs.mkdirSync(dir, { recursive: true });
        const file = path.join(dir, `${id}.tar.gz`);
        fs.writeFileSync(file, archive, { mode: 0o600 });
        const digest = sha256(archive);
        await services.db('compliance_exports').insert({ id, tenant_id: scope.tenantId, file, bytes: archive.length, sha256: digest, manifest: JSON.stringify(manifest), created_by: caller!.id, created_at: now.toISOString() });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'compliance_export', target_type: 'tenant', target_id: scope.tenantId, result: 'succeeded', tenant_id: scope.tenantId, detail: { export_id: id, rows: rowsTotal, sha256: digest } });
        return {
          export_id: id, tenant_id: scope.tenantId, format: 'tar.gz' as const, tables, rows: rowsTotal, bytes: archive.length, sha256: digest,
          download_url: `/compliance/export/${encodeURIComponent(scope.tenantId)}/${id}/download`, created_at: now.toISOString(),
        };
      },
    }),
    route({
      method: 'get',
      path: '/compliance/export/{tenant_id}/{export_id}/download',
      summary: 'Download a compliance export archive (admins, beyond the spec)',
      access: 'admin',
      params: z.object({ tenant_id: z.string().min(1).max(64), export_id: z.uuid() }),
      produces: 'application/gzip',
      errors: [404],
      handler: async ({ params, caller, res, services }) => {
        const scope = namedTenantScope(services.db, caller!, params.tenant_id);
        const row = await scope.select('compliance_exports').where({ id: params.export_id }).first();
        if (!row || !fs.existsSync(row.file)) throw new NotFound('Export not found');
        const data = fs.readFileSync(row.file);
        res.setHeader('Content-Type', 'application/gzip');
        res.setHeader('Content-Disposition', `attachment; filename="${scope.tenantId}-${row.id}.tar.gz"`);
        res.setHeader('X-Checksum-SHA256', row.sha256);
        res.status(200).end(data);
      },
    }),
  ];
}
