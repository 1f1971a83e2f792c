import crypto from 'node:crypto';
import { z } from 'zod';
import { PLATFORM_TENANT } from '../../core/auth/store';
import { Forbidden, invalid, NotConfigured, TooManyRequests, Unprocessable } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import { workflowsRef } from '../../core/contracts/workflows';
import { definePlugin, optional } from '../../core/plugin';
import { core } from '../../core/services';
import { deliveryId, HEADERS, apply, runWorkflow, schedulerPayload, verify } from './webhook';
import { leadMigrations, STAGES, upsertLead } from './store';

const text = (max: number) => z.string().trim().max(max);

const contactBody = z.object({
  name: text(200).min(1),
  email: z.email().max(254),
  company: text(200).optional(),
  message: z.string().trim().min(1).max(100_000),
  /** The honeypot: hidden in the form, so only a bot fills it. */
  website: z.string().max(2000).optional(),
});

const lead = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  company: z.string().nullable(),
  last_message: z.string().nullable(),
  source: z.string(),
  stage: z.enum(STAGES),
  demo_at: z.string().nullable(),
  submissions: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export default definePlugin({
  id: 'leads',
  prefix: '',
  deps: { db: core.db, actions: core.actions, config: core.config, clock: core.clock, workflows: optional(workflowsRef) },
  migrations: leadMigrations,
  routes: (route) => [
    route({
      method: 'post',
      path: '/contact/submit',
      summary: 'Public contact form: stores the message and the lead of its address (one lead per e-mail)',
      description: 'Spam protection: a hidden `website` field (honeypot) that people leave empty, a per-address budget an hour (config contact.perAddressPerHour), size limits.',
      access: 'public',
      body: contactBody,
      response: z.object({ received: z.literal(true), submission_id: z.string() }),
      status: 202,
      errors: [413, 429],
      handler: async ({ body, req, services }) => {
        const cfg = services.config.contact;
        if (body.message.length > cfg.maxMessageChars) throw invalid(['body', 'message'], `at most ${cfg.maxMessageChars} characters`);
        const address = (req.ip ?? req.socket.remoteAddress ?? 'unknown').slice(0, 64);
        const now = services.clock.now();
        const since = new Date(now.getTime() - 3600_000).toISOString();
        const [{ n }] = await services.db('contact_submissions').where('address', address).andWhere('created_at', '>', since).count({ n: '*' });
        if (Number(n) >= cfg.perAddressPerHour) {
          const oldest = await services.db('contact_submissions').where('address', address).andWhere('created_at', '>', since).orderBy('created_at').first();
          throw new TooManyRequests(`at most ${cfg.perAddressPerHour} submissions an hour from one address`, (Date.parse(oldest.created_at) + 3600_000 - now.getTime()) / 1000);
        }
        const id = crypto.randomUUID();
        // A bot gets the same answer as a person, so that it learns nothing; nothing but the count is kept.
        const spam = Boolean(body.website?.trim());
        const at = now.toISOString();
        const saved = spam ? null : await upsertLead(services.db, { email: body.email, name: body.name, company: body.company, message: body.message, source: 'contact_form' }, at);
        await services.db('contact_submissions').insert({ id, address, lead_id: saved?.id ?? null, verdict: spam ? 'honeypot' : 'accepted', created_at: at });
        await services.actions.record({ source: 'manual', actor: 'contact_form', action: 'submit_contact', target_type: 'lead', target_id: saved?.id ?? id, result: spam ? 'refused' : 'succeeded', detail: { verdict: spam ? 'honeypot' : 'accepted', new_lead: saved?.created ?? false }, tenant_id: PLATFORM_TENANT });
        return { received: true as const, submission_id: id };
      },
    }),
    route({
      method: 'get',
      path: '/leads/demo',
      summary: 'Demo leads (contact form and booked demos), newest first; platform staff only',
      access: 'admin',
      query: z.object({ stage: z.enum(STAGES).optional(), limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().min(1).max(512).optional() }),
      response: z.object({ leads: z.array(lead), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        // Leads are the platform operator's business, not a tenant's: only the platform tenant's admins see them.
        if (caller!.tenantId !== PLATFORM_TENANT) throw new Forbidden('leads are visible to platform staff only', 'PLATFORM_STAFF_ONLY');
        const q = services.db('leads');
        if (query.stage) q.where('stage', query.stage);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { leads: items.map((r) => ({ ...r, submissions: Number(r.submissions) })) as Array<z.input<typeof lead>>, next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/webhooks/scheduler',
      summary: 'Inbound webhook of the scheduling tool: a booked, moved or cancelled demo updates the lead of its address; workflow.run starts a workflow',
      description: `Signed with HMAC-SHA256 over "<timestamp>.<raw body>" (header ${HEADERS.signature}: sha256=<hex>, ${HEADERS.timestamp}: epoch seconds within webhooks.toleranceSeconds); ${HEADERS.delivery} is the replay guard: a delivery id is accepted once. workflow.run starts a workflow of the tenant webhooks.schedulerTenant (default: the platform tenant) as the service identity webhook:scheduler.`,
      access: 'public',
      // Checked in the handler, after the signature: an unsigned caller learns nothing from 422s.
      body: z.record(z.string(), z.unknown()),
      documentedBody: schedulerPayload,
      response: z.object({ delivery_id: z.string(), event: z.string(), action: z.enum(['book_demo', 'cancel_demo', 'run_workflow']), lead_id: z.string().nullable(), execution_id: z.string().nullable() }),
      errors: [401, 409, 503],
      handler: async ({ body, req, services }) => {
        const cfg = services.config.webhooks;
        if (!cfg.schedulerSecret) throw new NotConfigured('webhooks.schedulerSecret (WEBHOOK_SCHEDULER_SECRET)', 'The scheduler webhook needs its shared secret');
        verify(cfg.schedulerSecret, req.headers, (req as unknown as { rawBody?: string }).rawBody, services.clock.now().getTime(), cfg.toleranceSeconds);
        const id = deliveryId.safeParse(req.headers[HEADERS.delivery]);
        if (!id.success) throw invalid(['header', HEADERS.delivery], id.error.issues[0]!.message);
        const payload = schedulerPayload.safeParse(body);
        if (!payload.success) throw new Unprocessable(payload.error.issues.map((i) => ({ loc: ['body', ...(i.path as Array<string | number>)], msg: i.message, type: i.code })));
        const p = payload.data;
        const now = services.clock.now().toISOString();
        if (p.event === 'workflow.run') {
          if (!services.workflows) throw new NotConfigured('plugin workflows', 'workflow.run needs the workflows plugin');
          const tenant = cfg.schedulerTenant ?? PLATFORM_TENANT;
          const run = await runWorkflow(services.db, services.workflows, tenant, id.data, p.data.workflow_id, now);
          await services.actions.record({ source: 'automated', actor: 'scheduler_webhook', action: run.action, target_type: 'workflow_execution', target_id: run.execution_id, cause: id.data, result: 'succeeded', detail: { event: p.event, workflow_id: p.data.workflow_id }, tenant_id: tenant });
          return { delivery_id: id.data, event: p.event, action: 'run_workflow' as const, lead_id: null, execution_id: run.execution_id };
        }
        const done = await apply(services.db, id.data, p, now);
        await services.actions.record({ source: 'automated', actor: 'scheduler_webhook', action: done.action, target_type: 'lead', target_id: done.lead_id, cause: id.data, result: 'succeeded', detail: { event: p.event }, tenant_id: PLATFORM_TENANT });
        return { delivery_id: id.data, event: p.event, action: done.action as 'book_demo' | 'cancel_demo', lead_id: done.lead_id, execution_id: null };
      },
    }),
  ],
});
