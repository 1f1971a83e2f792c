// Business processes (a workflow with owners, an SLA and a department) and the organisational
// memory (facts and documents with tags, searchable).
import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid, NotFound } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import type { Deps } from './deps';
import { department, page, processSchema, processRunSchema, memorySchema, toProcess, toMemory, toRun } from './schemas';

export const processRoutes = (route: RouteMaker<Deps>) => [
  route({
    method: 'post',
    path: '/processes',
    summary: 'Define a business process: one of the tenant\'s workflows with owners, an SLA and the department that owns it',
    access: 'member',
    feature: 'enterprise',
    body: z.object({ name: z.string().trim().min(1).max(200), workflow_id: z.uuid(), owners: z.array(z.string().trim().min(1).max(320)).min(1).max(50), sla_seconds: z.number().int().min(1).max(30 * 86400), department }).strict(),
    response: processSchema,
    status: 201,
    errors: [422],
    handler: async ({ body, caller, services }) => {
      try {
        await services.workflows.definition(caller!, body.workflow_id);
      } catch (err) {
        if (err instanceof NotFound) throw invalid(['body', 'workflow_id'], `no workflow ${body.workflow_id} in this tenant`);
        throw err;
      }
      const at = services.clock.now().toISOString();
      const row = { id: crypto.randomUUID(), name: body.name, workflow_id: body.workflow_id, department: body.department, owners: JSON.stringify(body.owners), sla_seconds: body.sla_seconds, created_by: caller!.id, created_at: at, updated_at: at };
      await tenantScope(services.db, caller!).insert('enterprise_processes', row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_process', target_type: 'process', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { workflow_id: body.workflow_id, department: body.department } });
      return toProcess({ ...row, tenant_id: caller!.tenantId });
    },
  }),
  route({
    method: 'get',
    path: '/processes',
    summary: "The tenant's processes (beyond the spec), filter by department",
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ department: department.optional(), ...page }),
    response: z.object({ processes: z.array(processSchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const q = tenantScope(services.db, caller!).select('enterprise_processes');
      if (query.department) q.where('department', query.department);
      const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
      return { processes: items.map(toProcess), next_cursor };
    },
  }),
  route({
    method: 'post',
    path: '/processes/{process_id}/execute',
    summary: "Execute a process (202): its workflow runs on the kernels; the run records whether it met the SLA (poll /ops/workflows/{execution_id})",
    access: 'member',
    feature: 'enterprise',
    params: z.object({ process_id: z.uuid() }),
    response: processRunSchema,
    status: 202,
    errors: [404, 422],
    handler: async ({ params, caller, services }) => {
      const scope = tenantScope(services.db, caller!);
      const p = toProcess(await scope.get('enterprise_processes', { id: params.process_id }, 'Process'));
      const { execution, done } = await services.workflows.start(caller!, p.workflow_id);
      const at = services.clock.now();
      const row = { id: crypto.randomUUID(), process_id: p.id, execution_id: execution.id, state: execution.state, sla_met: null, duration_ms: null, due_at: new Date(at.getTime() + p.sla_seconds * 1000).toISOString(), finished_at: null, created_by: caller!.id, created_at: at.toISOString(), updated_at: at.toISOString() };
      await scope.insert('enterprise_process_runs', row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'execute_process', target_type: 'process', target_id: p.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { execution_id: execution.id } });
      services.jobs.add('process run', done.then(async (e) => {
        const ms = e.started_at && e.finished_at ? Date.parse(e.finished_at) - Date.parse(e.started_at) : null;
        const met = e.state === 'succeeded' && ms !== null && ms <= p.sla_seconds * 1000;
        await services.db('enterprise_process_runs').where({ id: row.id }).update({ state: e.state, sla_met: met, duration_ms: ms, finished_at: e.finished_at, updated_at: services.clock.now().toISOString() });
      }));
      return toRun({ ...row, tenant_id: caller!.tenantId, sla_seconds: p.sla_seconds });
    },
  }),
  route({
    method: 'post',
    path: '/memory/objects',
    summary: 'Store a fact or document in the organisational memory, with tags',
    access: 'member',
    feature: 'enterprise',
    body: z.object({ kind: z.enum(['fact', 'document']), title: z.string().trim().min(1).max(300), content: z.string().min(1).max(100_000), tags: z.array(z.string().trim().toLowerCase().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'lowercase letters, digits, _ . -')).max(50).default([]), department: department.optional() }).strict(),
    response: memorySchema,
    status: 201,
    errors: [422],
    handler: async ({ body, caller, services }) => {
      const at = services.clock.now().toISOString();
      const tags = [...new Set(body.tags)].sort();
      const row = { id: crypto.randomUUID(), kind: body.kind, title: body.title, content: body.content, tags: JSON.stringify(tags), tag_index: `|${tags.join('|')}|`, department: body.department ?? null, created_by: caller!.id, created_at: at, updated_at: at };
      await tenantScope(services.db, caller!).insert('enterprise_memory', row);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'store_memory', target_type: 'memory_object', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { kind: body.kind } });
      return toMemory({ ...row, tenant_id: caller!.tenantId });
    },
  }),
  route({
    method: 'get',
    path: '/memory/objects',
    summary: 'Search the organisational memory: q matches title and content (case-insensitive), tag and kind filter; newest first',
    access: 'viewer',
    feature: 'enterprise',
    query: z.object({ q: z.string().trim().min(1).max(200).optional(), tag: z.string().trim().toLowerCase().max(64).optional(), kind: z.enum(['fact', 'document']).optional(), department: department.optional(), ...page }),
    response: z.object({ objects: z.array(memorySchema), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const q = tenantScope(services.db, caller!).select('enterprise_memory');
      const like = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      if (query.q) {
        const pattern = like(query.q.toLowerCase());
        q.where((w) => w.whereRaw("lower(title) like ? escape '\\'", [pattern]).orWhereRaw("lower(content) like ? escape '\\'", [pattern]));
      }
      if (query.tag) q.whereRaw("tag_index like ? escape '\\'", [like(`|${query.tag}|`)]);
      if (query.kind) q.where('kind', query.kind);
      if (query.department) q.where('department', query.department);
      const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
      return { objects: items.map(toMemory), next_cursor };
    },
  }),
];
