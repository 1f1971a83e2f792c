import crypto from 'node:crypto';
import { z } from 'zod';
import { invalid } from '../../core/errors';
import { accountsRef } from '../../core/contracts/accounts';
import { definePlugin, optional } from '../../core/plugin';
import { core } from '../../core/services';
import { runControl, type Control, type Outcome } from './controls';
import { complianceMigrations } from './store';

const json = z.record(z.string(), z.unknown());
const status = z.enum(['pass', 'fail', 'not_applicable']);
const control = z.object({ id: z.string(), framework: z.string(), criterion: z.string(), title: z.string(), description: z.string(), parameters: z.record(z.string(), z.number()) });
const latest = z.object({ status, evidence: json, verified_at: z.string(), verified_by: z.string() }).nullable();

async function controls(db: import('knex').Knex): Promise<Control[]> {
  return (await db('compliance_controls').orderBy('id')).map((r) => ({ ...r, parameters: JSON.parse(r.parameters) }));
}

export default definePlugin({
  id: 'compliance',
  prefix: '/compliance',
  deps: { db: core.db, config: core.config, actions: core.actions, accounts: optional(accountsRef) },
  migrations: complianceMigrations,
  routes: (route) => [
    route({
      method: 'get',
      path: '/controls',
      summary: "The controls (SOC 2 common criteria by default), each with its automated test and the tenant's latest result",
      access: 'viewer',
      feature: 'compliance',
      query: z.object({ criterion: z.string().regex(/^[A-Z]{1,3}\d+(\.\d+)?$/).optional() }),
      response: z.object({ controls: z.array(control.extend({ latest })), next_cursor: z.null() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const list = (await controls(services.db)).filter((c) => !query.criterion || c.criterion === query.criterion);
        const out = [];
        for (const c of list) {
          const r = await services.db('compliance_results').where({ tenant_id: caller!.tenantId, control_id: c.id }).orderBy('verified_at', 'desc').first();
          out.push({ ...c, latest: r ? { status: r.status, evidence: JSON.parse(r.evidence), verified_at: r.verified_at, verified_by: r.verified_by } : null });
        }
        return { controls: out, next_cursor: null };
      },
    }),
    route({
      method: 'post',
      path: '/verify',
      summary: "Run the controls' tests against the live system for the caller's tenant and store the evidence",
      access: 'operator',
      feature: 'compliance',
      body: z.object({ control_ids: z.array(z.string().min(1).max(64)).min(1).max(50).optional() }).default({}),
      response: z.object({ run_id: z.string(), verified_at: z.string(), passed: z.number().int(), failed: z.number().int(), not_applicable: z.number().int(), results: z.array(z.object({ control_id: z.string(), criterion: z.string(), status, evidence: json })) }),
      errors: [422],
      handler: async ({ body, caller, services }) => {
        const all = await controls(services.db);
        body.control_ids?.forEach((id, i) => {
          if (!all.some((c) => c.id === id)) throw invalid(['body', 'control_ids', i], `unknown control "${id}"`);
        });
        const chosen = body.control_ids ? all.filter((c) => body.control_ids!.includes(c.id)) : all;
        const runId = crypto.randomUUID();
        const at = new Date().toISOString();
        const results: Array<{ control_id: string; criterion: string } & Outcome> = [];
        for (const c of chosen) results.push({ control_id: c.id, criterion: c.criterion, ...(await runControl(services, c, caller!.tenantId)) });
        await services.db('compliance_results').insert(results.map((r) => ({ id: crypto.randomUUID(), run_id: runId, tenant_id: caller!.tenantId, control_id: r.control_id, status: r.status, evidence: JSON.stringify(r.evidence), verified_by: caller!.id, verified_at: at })));
        const count = (s: string) => results.filter((r) => r.status === s).length;
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'verify_compliance', target_type: 'compliance_run', target_id: runId, result: 'succeeded', detail: { passed: count('pass'), failed: count('fail') }, tenant_id: caller!.tenantId });
        return { run_id: runId, verified_at: at, passed: count('pass'), failed: count('fail'), not_applicable: count('not_applicable'), results };
      },
    }),
    route({
      method: 'get',
      path: '/report',
      summary: "The tenant's compliance status per control, with the latest evidence and the history of results",
      access: 'viewer',
      feature: 'compliance',
      query: z.object({ history: z.coerce.number().int().min(1).max(100).default(10) }),
      response: z.object({ tenant_id: z.string(), framework: z.string(), verified_at: z.string().nullable(), summary: z.object({ pass: z.number().int(), fail: z.number().int(), not_applicable: z.number().int(), not_verified: z.number().int() }), controls: z.array(control.extend({ latest, history: z.array(z.object({ status, verified_at: z.string() })) })) }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const list = await controls(services.db);
        const summary = { pass: 0, fail: 0, not_applicable: 0, not_verified: 0 };
        let last: string | null = null;
        const out = [];
        for (const c of list) {
          const rows = await services.db('compliance_results').where({ tenant_id: caller!.tenantId, control_id: c.id }).orderBy('verified_at', 'desc').limit(query.history);
          const head = rows[0];
          if (head) {
            summary[head.status as 'pass' | 'fail' | 'not_applicable']++;
            if (!last || head.verified_at > last) last = head.verified_at;
          } else summary.not_verified++;
          out.push({ ...c, latest: head ? { status: head.status, evidence: JSON.parse(head.evidence), verified_at: head.verified_at, verified_by: head.verified_by } : null, history: rows.map((r) => ({ status: r.status, verified_at: r.verified_at })) });
        }
        return { tenant_id: caller!.tenantId, framework: 'SOC2', verified_at: last, summary, controls: out };
      },
    }),
  ],
});
