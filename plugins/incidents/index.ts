import { z } from 'zod';
import { Conflict, HttpError, invalid, Unavailable } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import { incidentReadsRef } from '../../core/contracts/incidents';
import { createServiceRef, definePlugin, provide } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import { core, type Services } from '../../core/services';
import { analytics, BUCKET_MS, summary } from './analytics';
import { watchMesh } from './auto';
import { MITIGATIONS } from './mitigations';
import { analyticsQuery, detectBody, idParams, incident, listQuery, mitigateBody, noteBody, withTimeline } from './schemas';
import { IncidentReader } from './reads';
import { ACTIVE, IncidentStore, incidentMigrations, RULES, scoped, visible, type Incident } from './store';

/** The incident store and the watcher that opens incidents from mesh events. */
class Incidents {
  readonly store: IncidentStore;
  private unwatch?: () => Promise<void>;

  constructor(private readonly d: Pick<Services, 'db' | 'events' | 'actions' | 'log' | 'mesh'>) {
    this.store = new IncidentStore(d.db, d.events);
  }

  start(): void {
    this.unwatch = watchMesh(this.d, this.store);
  }

  async stop(): Promise<void> {
    await this.unwatch?.();
  }
}

const incidentsRef = createServiceRef<Incidents>('incidents.store');

function record(services: Pick<Services, 'actions'>, caller: Caller, action: string, i: Incident, result: 'succeeded' | 'failed' | 'refused', detail: Record<string, unknown> = {}) {
  return services.actions.record({
    source: 'manual',
    actor: caller.id,
    action,
    target_type: 'incident',
    target_id: i.id,
    cause: null,
    result,
    detail: { title: i.title, ...detail },
    tenant_id: i.tenant_id,
  });
}

export default definePlugin({
  id: 'incidents',
  prefix: '',
  deps: { db: core.db, actions: core.actions, mesh: core.mesh, incidents: incidentsRef },
  provides: [
    provide(incidentReadsRef, { deps: { db: core.db }, factory: (d) => new IncidentReader(d.db) }),
    provide(incidentsRef, {
      deps: { db: core.db, events: core.events, actions: core.actions, log: core.log, mesh: core.mesh },
      factory: (d) => new Incidents(d),
      start: (i) => i.start(),
      stop: (i) => i.stop(),
    }),
  ],
  migrations: incidentMigrations,
  routes: (route) => [
    route({
      method: 'post',
      path: '/incidents/detect',
      summary: "Report an incident (it belongs to the caller's tenant)",
      access: 'operator',
      body: detectBody,
      response: withTimeline,
      status: 201,
      handler: async ({ body, caller, services }) => {
        // A kernel's id is its domain name and a node's id is `<domain>-<n>` (MESH-API.md): they must agree.
        const domain = body.domain ?? body.kernel_id;
        if (body.domain && body.kernel_id && body.domain !== body.kernel_id) throw invalid(['body', 'kernel_id'], `kernel ${body.kernel_id} is not the kernel of domain ${body.domain}`);
        if (body.node_id && domain && !body.node_id.startsWith(`${domain}-`)) throw invalid(['body', 'node_id'], `node ${body.node_id} is not a node of ${domain}`);
        const store = services.incidents.store;
        const opened = await store.open({ ...body, domain, tenant_id: caller!.tenantId, source: 'manual', actor: caller!.id });
        await record(services, caller!, 'open_incident', opened!, 'succeeded', { severity: body.severity });
        return store.get(opened!.id, null);
      },
    }),
    route({
      method: 'get',
      path: '/ops/incidents/active',
      summary: 'Open and mitigated incidents, newest first',
      access: 'viewer',
      query: listQuery,
      response: z.object({ incidents: z.array(incident), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = scoped(services.db('incidents'), visible(caller!)).whereIn('state', ACTIVE);
        if (query.severity) q.where('severity', query.severity);
        if (query.domain) q.where('domain', query.domain);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { incidents: items.map(({ active_cause: _a, ...r }) => r as unknown as Incident), next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/ops/incidents/{incident_id}',
      summary: 'One incident with its timeline',
      access: 'viewer',
      params: idParams,
      response: withTimeline,
      errors: [404],
      handler: ({ params, caller, services }) => services.incidents.store.get(params.incident_id, visible(caller!)),
    }),
    route({
      method: 'post',
      path: '/ops/incidents/{incident_id}/resolve',
      summary: 'Resolve an open or mitigated incident',
      access: 'operator',
      params: idParams,
      body: noteBody,
      response: withTimeline,
      errors: [404, 409],
      handler: async ({ params, body, caller, services }) => {
        const after = await services.incidents.store.transition(params.incident_id, visible(caller!), 'resolved', { source: 'manual', actor: caller!.id, detail: body.note ? { note: body.note } : {} });
        await record(services, caller!, 'resolve_incident', after, 'succeeded');
        return after;
      },
    }),
    route({
      method: 'post',
      path: '/incidents/{incident_id}/close',
      summary: 'Close a resolved incident',
      access: 'operator',
      params: idParams,
      body: noteBody,
      response: withTimeline,
      errors: [404, 409],
      handler: async ({ params, body, caller, services }) => {
        const after = await services.incidents.store.transition(params.incident_id, visible(caller!), 'closed', { source: 'manual', actor: caller!.id, detail: body.note ? { note: body.note } : {} });
        await record(services, caller!, 'close_incident', after, 'succeeded');
        return after;
      },
    }),
    route({
      method: 'post',
      path: '/incidents/{incident_id}/mitigate',
      summary: 'Apply a mitigation on the mesh (pause_kernel, isolate_kernel, drain_node, restart_node)',
      access: 'operator',
      params: idParams,
      body: mitigateBody,
      response: withTimeline,
      errors: [404, 409, 503],
      handler: async ({ params, body, caller, services }) => {
        const m = MITIGATIONS[body.action];
        if (!m.pattern.test(body.target)) throw invalid(['body', 'target'], `${body.action} needs a ${m.target} id${m.target === 'node' ? ' such as trading-1' : ' such as trading'}`);
        const store = services.incidents.store;
        const scope = visible(caller!);
        const current = await store.get(params.incident_id, scope);
        const allowed: readonly string[] = RULES.mitigated;
        if (!allowed.includes(current.state)) throw new Conflict(`Incident is ${current.state}; it can be mitigated only when ${allowed.join(' or ')}`);
        const what = { action: body.action, target: body.target, ...(body.note ? { note: body.note } : {}) };
        let result: unknown;
        try {
          result = await m.run(services.mesh, body.target, { source: 'manual', actor: caller!.id, cause: current.id });
        } catch (err) {
          const status = err instanceof HttpError ? err.status : 503;
          const detail = err instanceof HttpError ? err.detail : 'the mesh could not perform the action';
          await store.note(current, { kind: 'mitigation_failed', source: 'manual', actor: caller!.id, detail: { ...what, status, error: detail } });
          await record(services, caller!, 'mitigate_incident', current, status === 409 ? 'refused' : 'failed', { ...what, status });
          if (err instanceof HttpError) throw err;
          throw new Unavailable(`Mitigation ${body.action} on ${body.target} failed: ${String(detail)}`);
        }
        const outcome = result && typeof result === 'object' ? { result } : {};
        let after;
        try {
          after = await store.transition(current.id, scope, 'mitigated', { source: 'manual', actor: caller!.id, detail: { ...what, ...outcome } });
        } catch (err) {
          if (!(err instanceof Conflict)) throw err;
          // The incident moved on (e.g. resolved) while the mesh acted: the mesh change is real,
          // so the timeline still records it, without a change of state.
          const latest = await store.get(current.id, scope);
          await store.note(latest, { kind: 'mitigation_applied_late', source: 'manual', actor: caller!.id, detail: { ...what, ...outcome } });
          await record(services, caller!, 'mitigate_incident', latest, 'succeeded', { ...what, state_unchanged: latest.state });
          throw new Conflict(`${(err).message}; the mitigation was carried out and is in the timeline`);
        }
        await record(services, caller!, 'mitigate_incident', after, 'succeeded', what);
        return after;
      },
    }),
    route({
      method: 'get',
      path: '/incidents/summary',
      summary: 'Counts of visible incidents by state, severity and domain',
      access: 'viewer',
      response: z.object({
        total: z.number(),
        active: z.number(),
        by_state: z.record(z.string(), z.number()),
        by_severity: z.record(z.string(), z.number()),
        by_domain: z.record(z.string(), z.number()),
      }),
      handler: ({ caller, services }) => summary(services.db, visible(caller!)),
    }),
    route({
      method: 'get',
      path: '/incidents/analytics',
      summary: 'MTTA, MTTR and counts over time, from the timelines (default: the last 7 days by day)',
      access: 'viewer',
      query: analyticsQuery,
      response: z.object({
        since: z.string(),
        until: z.string(),
        bucket: z.enum(['hour', 'day']),
        incidents: z.number(),
        acknowledged: z.number(),
        resolved: z.number(),
        mtta_seconds: z.number().nullable(),
        mttr_seconds: z.number().nullable(),
        series: z.array(z.object({ start: z.string(), opened: z.number(), resolved: z.number(), closed: z.number() })),
      }),
      errors: [422],
      handler: ({ query, caller, services }) => {
        const until = query.until ? new Date(query.until) : new Date();
        const since = query.since ? new Date(query.since) : new Date(until.getTime() - 7 * 86_400_000);
        if (since >= until) throw invalid(['query', 'since'], 'since must be before until');
        if ((until.getTime() - since.getTime()) / BUCKET_MS[query.bucket] > 1000) throw invalid(['query', 'bucket'], 'at most 1000 buckets: widen the bucket or narrow the window');
        return analytics(services.db, visible(caller!), since, until, query.bucket);
      },
    }),
  ],
});
