import { z } from 'zod';
import { PLATFORM_TENANT } from '../../core/auth/store';
import { accountsRef } from '../../core/contracts/accounts';
import { securityRef, type SecurityService } from '../../core/contracts/security';
import { invalid, NotFound, StateConflict, Unavailable } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import { definePlugin, provide } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import { roleAtLeast } from '../../core/roles';
import { core } from '../../core/services';
import { securityMigrations } from './migrations';
import { metrics, scoped, tenantReport, type TenantFilter } from './report';
import * as s from './schemas';
import { SecurityCore } from './service';
import { actionOf, eventOf, findingOf } from './store';

const deps = { db: core.db, clock: core.clock, actions: core.actions, sec: securityRef, accounts: accountsRef };

/** The plugin's own routes reach past the interface to the store, responder and predictive runner. */
function internals(sec: SecurityService): SecurityCore {
  if (!(sec instanceof SecurityCore)) throw new Unavailable('The security service is replaced (tests) and has no store');
  return sec;
}

/**
 * Rows a caller may read: an admin any tenant (all when it names none); anyone else only
 * their own tenant (another tenant named is 404) plus, for operators, platform-wide rows.
 */
export function tenantFilter(caller: Caller, tenantId?: string): TenantFilter {
  if (caller.role === 'admin') return tenantId ? { tenantId, platform: false } : null;
  if (tenantId && tenantId !== caller.tenantId) throw new NotFound('Tenant not found', 'TENANT_NOT_FOUND');
  return { tenantId: caller.tenantId, platform: roleAtLeast(caller.role, 'operator') && !tenantId };
}

const page = <T extends z.ZodType>(key: string, item: T) => z.object({ [key]: z.array(item), next_cursor: z.string().nullable() });

export default definePlugin({
  id: 'security',
  prefix: '/security',
  deps,
  migrations: securityMigrations,
  provides: [
    provide(securityRef, {
      deps: { db: core.db, events: core.events, actions: core.actions, log: core.log, accounts: accountsRef, auth: core.auth, mesh: core.mesh, clock: core.clock },
      factory: (d) => new SecurityCore(d),
      start: (svc) => (svc as SecurityCore).start(),
      stop: (svc) => (svc as SecurityCore).stop(),
    }),
  ],
  routes: (route) => [
    route({
      method: 'get', path: '/events', summary: 'Security events, newest first (filters: tenant, kernel, severity, category, time range)', access: 'viewer',
      query: s.eventsQuery, response: page('events', s.event), errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        if (query.since && query.until && query.since >= query.until) throw invalid(['query', 'until'], 'until must be after since');
        const q = scoped(services.db('security_events'), tenantFilter(caller!, query.tenant_id));
        if (query.kernel_id) q.where('kernel_id', query.kernel_id);
        if (query.severity) q.where('severity', query.severity);
        if (query.category) q.where('category', query.category);
        if (query.since) q.where('created_at', '>=', new Date(query.since).toISOString());
        if (query.until) q.where('created_at', '<', new Date(query.until).toISOString());
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { events: items.map(eventOf), next_cursor };
      },
    }),
    route({
      method: 'get', path: '/findings', summary: 'Threat findings raised by the detection rules, with their evidence events', access: 'viewer',
      query: s.findingsQuery, response: page('findings', s.finding), errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        const q = scoped(services.db('security_findings'), tenantFilter(caller!, query.tenant_id));
        if (query.state) q.where('state', query.state);
        if (query.severity) q.where('severity', query.severity);
        if (query.rule_id) q.where('rule_id', query.rule_id);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { findings: items.map(findingOf), next_cursor };
      },
    }),
    ...(['acknowledge', 'resolve'] as const).map((verb) =>
      route({
        method: 'post', path: `/findings/{id}/${verb}`, summary: `${verb === 'acknowledge' ? 'Acknowledge' : 'Resolve'} a finding`, access: 'operator',
        params: s.idParams, body: s.noteBody, response: s.finding, errors: [404, 409],
        handler: async ({ params, caller, services }) => {
          const sec = internals(services.sec);
          const row = await scoped(services.db('security_findings'), tenantFilter(caller!)).where({ id: params.id }).first();
          if (!row) throw new NotFound('Finding not found', 'FINDING_NOT_FOUND');
          const allowed = row.state === 'open' ? ['acknowledge', 'resolve'] : row.state === 'acknowledged' ? ['resolve'] : [];
          if (!allowed.includes(verb)) throw new StateConflict(row.state, allowed, `A ${row.state} finding cannot be ${verb}d`);
          const after = await sec.store.transition(row.id, verb === 'acknowledge' ? 'acknowledged' : 'resolved', caller!.id);
          await sec.recordAction({ tenant_id: row.tenant_id, action: `${verb}_finding`, target_type: 'finding', target_id: row.id, trigger: 'operator', finding_id: row.id, actor: caller!.id, result: 'succeeded' });
          return after;
        },
      }),
    ),
    route({
      method: 'get', path: '/actions', summary: 'Security actions taken, by rule, operator or connector', access: 'viewer',
      query: s.actionsQuery, response: page('actions', s.securityAction), errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        const q = scoped(services.db('security_actions'), tenantFilter(caller!, query.tenant_id));
        if (query.action) q.where('action', query.action);
        if (query.finding_id) q.where('finding_id', query.finding_id);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { actions: items.map(actionOf), next_cursor };
      },
    }),
    route({
      method: 'post', path: '/actions', summary: 'Take a response: lock an account, revoke its sessions, disable a user, isolate a mesh node', access: 'operator',
      body: s.takeActionBody, response: s.securityAction, status: 201, errors: [404, 409, 422],
      handler: async ({ body, caller, services }) => {
        const sec = internals(services.sec);
        const base = { trigger: 'operator' as const, actor: caller!.id, finding_id: body.finding_id ?? null, detail: body.reason ? { reason: body.reason } : {} };
        if (body.action === 'isolate_node') {
          if (caller!.role !== 'admin' && caller!.tenantId !== PLATFORM_TENANT) throw new NotFound(`Node "${body.node_id}" not found`, 'NODE_NOT_FOUND');
          return sec.responder.isolateNode(body.node_id, caller!.id, body.reason ?? null);
        }
        const user = await sec.responder.findUser(caller!.role === 'admin' ? null : caller!.tenantId, body.user);
        if (!user) throw new NotFound('User not found', 'USER_NOT_FOUND');
        if (user.id === caller!.id) throw new StateConflict('self', [], 'An operator cannot lock, disable or end the sessions of their own account');
        if (body.action === 'lock_account') return sec.responder.lockAccount(user, body.lock_seconds, base);
        if (body.action === 'disable_user') return sec.responder.disableUser(user, base);
        return sec.responder.revokeSessions(user, base);
      },
    }),
    route({
      method: 'post', path: '/actions/{id}/undo', summary: 'Undo a response (unlock, re-enable, resume the node)', access: 'operator',
      params: s.idParams, response: s.securityAction, errors: [404, 409],
      handler: ({ params, caller, services }) => internals(services.sec).responder.undo(params.id, caller!.id, { tenantId: caller!.tenantId, all: caller!.role === 'admin' }),
    }),
    route({
      method: 'get', path: '/predictive-alerts', summary: 'Alerts where a fitted event-rate forecast crosses its threshold within the horizon', access: 'viewer',
      query: s.actionsQuery.pick({ tenant_id: true, limit: true, cursor: true }), response: page('alerts', s.predictiveAlert), errors: [404, 422],
      handler: async ({ query, caller, services }) => {
        const q = scoped(services.db('security_predictive_alerts'), tenantFilter(caller!, query.tenant_id));
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { alerts: items.map((r) => ({ ...r, threshold: Number(r.threshold), predicted_peak: Number(r.predicted_peak), model: JSON.parse(r.model) })) as never, next_cursor };
      },
    }),
    route({
      method: 'post', path: '/predictive-analysis/run', summary: "Fit per-category event rates of the caller's tenant on the analytics kernel (202, poll the run)", access: 'member',
      body: s.predictiveBody, response: s.predictiveRun, status: 202, errors: [422],
      handler: async ({ body, caller, services }) => {
        const run = await internals(services.sec).predictive.start(caller!.tenantId, body);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'run_predictive_analysis', target_type: 'predictive_run', target_id: run.id, result: 'succeeded', detail: body, tenant_id: caller!.tenantId });
        return run;
      },
    }),
    route({
      method: 'get', path: '/predictive-analysis/{id}', summary: 'One predictive run: its state, models (method, error) and alerts', access: 'viewer',
      params: s.idParams, response: s.predictiveRun, errors: [404],
      handler: async ({ params, caller, services }) => {
        const run = await internals(services.sec).predictive.get(params.id, caller!.tenantId);
        if (!run) throw new NotFound('Predictive run not found', 'RUN_NOT_FOUND');
        return run;
      },
    }),
    route({
      method: 'get', path: '/metrics', summary: 'Counts by severity and category, findings by state and rule, MTTD and MTTR', access: 'viewer',
      query: s.windowQuery, response: s.metricsResponse, errors: [404, 422],
      handler: ({ query, caller, services }) => {
        const to = query.until ? new Date(query.until) : services.clock.now();
        const from = query.since ? new Date(query.since) : new Date(to.getTime() - 30 * 86_400_000);
        if (from >= to) throw invalid(['query', 'until'], 'until must be after since');
        return metrics(services.db, tenantFilter(caller!, query.tenant_id), from.toISOString(), to.toISOString());
      },
    }),
    route({
      method: 'get', path: '/tenant_report/{tenant_id}', summary: "One tenant's security posture", access: 'viewer',
      params: s.tenantParams, response: s.tenantReport, errors: [404],
      handler: async ({ params, caller, services }) => {
        tenantFilter(caller!, params.tenant_id);
        if (!(await services.db('tenants').where({ id: params.tenant_id }).first('id'))) throw new NotFound('Tenant not found', 'TENANT_NOT_FOUND');
        return tenantReport(services.db, services.accounts, params.tenant_id, services.clock.now(), internals(services.sec).keySources);
      },
    }),
  ],
});
