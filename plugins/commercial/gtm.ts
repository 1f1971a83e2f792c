import { z } from 'zod';
import type { Config } from '../../core/config';
import { HttpError, invalid, NotConfigured } from '../../core/errors';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import type { Deps } from './index';

const DAY = 86_400_000;
const amount = z.object({ amount: z.string(), currency: z.string() });
const usageIn = z.strictObject({
  requests_per_month: z.number().min(0).max(1e12).default(0),
  kernel_cpu_hours_per_month: z.number().min(0).max(1e9).default(0),
  llm_tokens_per_month: z.number().min(0).max(1e13).default(0),
  telemetry_events_per_month: z.number().min(0).max(1e12).default(0),
});

/** Price of a plan (+ add-ons needed for the features) for a month of the expected usage, minor units. */
function quote(config: Config, plan: string, u: z.infer<typeof usageIn>, needed: string[]) {
  const b = config.billing;
  // A plan whose request budget cannot carry the expected requests is no option.
  if (u.requests_per_month > config.plans[plan].requestsPerMinute * 60 * 24 * 30) return null;
  const have = new Set(config.plans[plan].features);
  const addons: string[] = [];
  for (const f of needed) {
    if (have.has(f)) continue;
    const a = Object.entries(b.addons).find(([, x]) => x.features.includes(f));
    if (!a) return null;
    addons.push(a[0]);
    for (const g of a[1].features) have.add(g);
  }
  const qty: Record<string, number> = { requests: u.requests_per_month, kernel_cpu_ms: u.kernel_cpu_hours_per_month * 3_600_000, llm_tokens: u.llm_tokens_per_month, telemetry_events: u.telemetry_events_per_month };
  const lines: Array<{ item: string; minor: number }> = [{ item: `plan ${plan}`, minor: b.planPrices[plan] ?? 0 }];
  for (const a of [...new Set(addons)]) lines.push({ item: `add-on ${a}`, minor: b.addons[a].price });
  for (const [metric, q] of Object.entries(qty)) {
    const p = b.unitPrices[plan]?.[metric];
    // Whole units, then exact integer arithmetic: round half up once per line.
    if (p && q > 0) {
      const num = BigInt(Math.round(q)) * BigInt(p.amount);
      const per = BigInt(p.per);
      lines.push({ item: `${metric} x ${q}`, minor: Number(num / per + ((num % per) * 2n >= per ? 1n : 0n)) });
    }
  }
  return { plan, addons: [...new Set(addons)], lines, minor: lines.reduce((a, l) => a + l.minor, 0) };
}

export function gtmRoutes(route: RouteMaker<Deps>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/gtm/enrich_lead',
      summary: "Enrich a lead from what the platform knows (admins): the tenant of the e-mail's domain, its plan, users and use; an outside enrichment service when asked and configured",
      access: 'admin',
      body: z.strictObject({ email: z.email().max(320), company: z.string().max(200).optional(), external: z.boolean().default(false) }),
      response: z.object({
        email: z.string(), domain: z.string(), company: z.string().nullable(),
        tenant: z.object({ tenant_id: z.string(), name: z.string(), plan: z.string(), created_at: z.string(), users: z.number().int(), matched_by: z.enum(['tenant_domain', 'user_email']), requests_30d: z.number(), kernel_tasks_30d: z.number() }).nullable(),
        external: z.record(z.string(), z.unknown()).nullable(), sources: z.array(z.string()),
      }),
      errors: [422, 502, 503],
      handler: async ({ body, caller, services }) => {
        const domain = body.email.split('@')[1]!.toLowerCase();
        const sources = ['tenants', 'users'];
        let tenantId: string | null = null;
        let matchedBy: 'tenant_domain' | 'user_email' = 'tenant_domain';
        for (const t of await services.db('tenants').select('id', 'domains')) {
          if ((JSON.parse(t.domains) as string[]).includes(domain)) tenantId = t.id;
        }
        if (!tenantId) {
          const u = await services.db('users').whereRaw('lower(email) like ?', [`%@${domain}`]).first('tenant_id');
          if (u) [tenantId, matchedBy] = [u.tenant_id, 'user_email'];
        }
        let tenant = null;
        if (tenantId) {
          const t = await services.db('tenants').where({ id: tenantId }).first();
          const users = await services.db('users').where({ tenant_id: tenantId }).count({ n: '*' });
          const now = services.clock.now();
          const from = new Date(now.getTime() - 30 * DAY).toISOString();
          const req = (await services.usage.totals('requests', from, now.toISOString(), tenantId)).get(tenantId) ?? 0;
          const tasks = (await services.usage.totals('kernel_tasks', from, now.toISOString(), tenantId)).get(tenantId) ?? 0;
          tenant = { tenant_id: t.id, name: t.name, plan: t.plan, created_at: t.created_at, users: Number(users[0]?.n ?? 0), matched_by: matchedBy, requests_30d: req, kernel_tasks_30d: tasks };
          sources.push('usage_counters');
        }
        let external = null;
        if (body.external) {
          const url = services.config.commercial.enrichmentUrl;
          if (!url) throw new NotConfigured('commercial.enrichmentUrl');
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: body.email, domain }), signal: AbortSignal.timeout(5000) }).catch((err: Error) => {
            throw new HttpError(502, `the enrichment service did not answer: ${err.message}`);
          });
          if (!res.ok) throw new HttpError(502, `the enrichment service answered ${res.status}`);
          const data = await res.json().catch(() => null);
          if (!data || typeof data !== 'object' || Array.isArray(data)) throw new HttpError(502, 'the enrichment service did not answer a JSON object');
          external = data as Record<string, unknown>;
          sources.push(url);
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'enrich_lead', target_type: 'lead', target_id: domain, result: 'succeeded', detail: { matched: Boolean(tenant), external: body.external } });
        return { email: body.email, domain, company: body.company ?? tenant?.name ?? null, tenant, external, sources };
      },
    }),
    route({
      method: 'post',
      path: '/gtm/generate_proposal',
      summary: "A proposal for a lead: each plan priced for the lead's expected monthly use (with the add-ons its needed features require), the cheapest recommended; worded by the LLM when one is configured, from a template otherwise",
      access: 'admin',
      body: z.strictObject({ company: z.string().trim().min(1).max(200), contact_email: z.email().optional(), expected_usage: usageIn.prefault({}), features_needed: z.array(z.string().min(1).max(64)).max(50).default([]) }),
      response: z.object({
        company: z.string(), currency: z.string(),
        options: z.array(z.object({ plan: z.string(), addons: z.array(z.string()), monthly: amount, annual: amount, lines: z.array(z.object({ item: z.string(), amount })) })),
        recommendation: z.object({ plan: z.string(), addons: z.array(z.string()), monthly: amount, annual: amount }),
        document: z.object({ format: z.literal('markdown'), wording: z.enum(['llm', 'template']), text: z.string() }),
        method: z.string(), inputs: z.array(z.string()),
      }),
      errors: [422, 502],
      handler: async ({ body, caller, services }) => {
        const fmt = (m: number) => { const a = services.billing.format(m); return { amount: a.amount, currency: a.currency }; };
        const quotes = Object.keys(services.config.plans).map((p) => quote(services.config, p, body.expected_usage, body.features_needed)).filter((q) => q !== null);
        if (!quotes.length) throw invalid(['body', 'features_needed'], 'no plan or add-on offers these features');
        const options = quotes.sort((a, b) => a.minor - b.minor).map((q) => ({ plan: q.plan, addons: q.addons, monthly: fmt(q.minor), annual: fmt(q.minor * 12), lines: q.lines.map((l) => ({ item: l.item, amount: fmt(l.minor) })) }));
        const best = options[0];
        const facts = [
          `# Proposal for ${body.company}`,
          '',
          `Recommended: the **${best.plan}** plan${best.addons.length ? ` with ${best.addons.join(', ')}` : ''} at ${best.monthly.amount} ${best.monthly.currency} a month (${best.annual.amount} a year) for the expected use.`,
          '',
          '| Option | Monthly | Annual |',
          '|---|---|---|',
          ...options.map((o) => `| ${o.plan}${o.addons.length ? ' + ' + o.addons.join(', ') : ''} | ${o.monthly.amount} | ${o.annual.amount} |`),
          '',
          `Expected monthly use: ${Object.entries(body.expected_usage).map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`).join('; ')}.`,
        ].join('\n');
        let text = facts;
        let wording: 'llm' | 'template' = 'template';
        if (services.llm.configured()) {
          const answer = await services.llm.chat({
            messages: [
              { role: 'system', content: 'You write short, factual sales proposals in markdown. Keep every number exactly as given; do not add prices or claims.' },
              { role: 'user', content: `Write the proposal from these facts:\n\n${facts}` },
            ],
          });
          text = answer.message.content ?? facts;
          wording = 'llm';
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'generate_proposal', target_type: 'lead', target_id: body.company.slice(0, 128), result: 'succeeded', detail: { plan: best.plan, monthly: best.monthly.amount, wording } });
        return {
          company: body.company, currency: services.config.billing.currency, options, recommendation: { plan: best.plan, addons: best.addons, monthly: best.monthly, annual: best.annual },
          document: { format: 'markdown' as const, wording, text },
          method: 'each plan whose request budget carries the expected requests: monthly fee + add-ons covering the needed features + expected use x the plan unit prices (billing.unitPrices); the cheapest is recommended',
          inputs: ['billing.planPrices', 'billing.unitPrices', 'billing.addons', 'plans'],
        };
      },
    }),
  ];
}
