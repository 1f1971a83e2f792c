import { z } from 'zod';

export const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};
export const department = z.string().trim().toLowerCase().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a department name: lowercase letters, digits, _ and -');
const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

export const processSchema = z.object({ id: z.string(), tenant_id: z.string(), name: z.string(), workflow_id: z.string(), department: z.string(), owners: z.array(z.string()), sla_seconds: z.number().int(), created_by: z.string(), created_at: z.string(), updated_at: z.string() });
export const toProcess = (r: Record<string, any>): z.output<typeof processSchema> => ({ id: r.id, tenant_id: r.tenant_id, name: r.name, workflow_id: r.workflow_id, department: r.department, owners: parse(r.owners), sla_seconds: Number(r.sla_seconds), created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at });

export const processRunSchema = z.object({ id: z.string(), tenant_id: z.string(), process_id: z.string(), execution_id: z.string(), state: z.string(), sla_seconds: z.number().int(), due_at: z.string(), sla_met: z.boolean().nullable(), duration_ms: z.number().nullable(), finished_at: z.string().nullable(), created_by: z.string(), created_at: z.string() });
export const toRun = (r: Record<string, any>): z.output<typeof processRunSchema> => ({ id: r.id, tenant_id: r.tenant_id, process_id: r.process_id, execution_id: r.execution_id, state: r.state, sla_seconds: r.sla_seconds, due_at: r.due_at, sla_met: r.sla_met === null || r.sla_met === undefined ? null : !!r.sla_met, duration_ms: r.duration_ms ?? null, finished_at: r.finished_at ?? null, created_by: r.created_by, created_at: r.created_at });

export const memorySchema = z.object({ id: z.string(), tenant_id: z.string(), kind: z.enum(['fact', 'document']), title: z.string(), content: z.string(), tags: z.array(z.string()), department: z.string().nullable(), created_by: z.string(), created_at: z.string(), updated_at: z.string() });
export const toMemory = (r: Record<string, any>): z.output<typeof memorySchema> => ({ id: r.id, tenant_id: r.tenant_id, kind: r.kind, title: r.title, content: r.content, tags: parse(r.tags), department: r.department ?? null, created_by: r.created_by, created_at: r.created_at, updated_at: r.updated_at });
