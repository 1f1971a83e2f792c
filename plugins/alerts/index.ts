import crypto from 'node:crypto';
import { z } from 'zod';
import { nowIso } from '../../core/db';
import { cloudEventsRef } from '../../core/contracts/cloudevents';
import { invalid, NotConfigured, NotFound } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import { createServiceRef, definePlugin, optional, provide } from '../../core/plugin';
import { core, type Services } from '../../core/services';
import { Dispatcher } from './dispatcher';
import { alertMigrations, EVENT_TYPES, toSubscription, type Subscription } from './store';
import { refuseUrl } from './urls';

/** Alert delivery: one dispatcher a host, made and stopped by the host. */
const dispatcherRef = createServiceRef<Dispatcher>('alerts.dispatcher');

const subscription = z.object({
  id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()),
  format: z.enum(['json', 'cloudevents']),
  description: z.string().nullable(),
  created_by: z.string(),
  created_at: z.string(),
});
const subParams = z.object({ subscription_id: z.uuid() });
const page = {
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().min(1).max(512).optional(),
};

const publicView = ({ secret: _s, ...rest }: Subscription) => rest;


async function ownSubscription(services: Pick<Services, 'db'>, tenantId: string, id: string): Promise<Subscription> {
  const row = await services.db('alert_subscriptions').where({ id, tenant_id: tenantId }).first();
  if (!row) throw new NotFound(`No alert subscription ${id}`);
  return toSubscription(row);
}

export default definePlugin({
  id: 'alerts',
  prefix: '/ops/alerts',
  deps: { db: core.db, config: core.config, dispatcher: dispatcherRef, cloudEvents: optional(cloudEventsRef) },
  provides: [
    provide(dispatcherRef, {
      deps: { db: core.db, events: core.events, config: core.config, log: core.log, cloudEvents: optional(cloudEventsRef) },
      factory: (d) => new Dispatcher(d),
      start: (d) => d.start(),
      stop: (d) => d.stop(),
    }),
  ],
  migrations: alertMigrations,
  routes: (route) => [
    route({
      method: 'get',
      path: '/subscriptions',
      summary: "The tenant's alert subscriptions (secrets are never listed)",
      access: 'operator',
      query: z.object(page),
      response: z.object({ subscriptions: z.array(subscription), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const { items, next_cursor } = await pageOf(services.db('alert_subscriptions').where({ tenant_id: caller!.tenantId }), query.limit, query.cursor);
        return { subscriptions: items.map((r) => publicView(toSubscription(r))), next_cursor };
      },
    }),
    route({
      method: 'post',
      path: '/subscriptions',
      summary: 'Subscribe a webhook URL to event types; the signing secret is shown only in this answer',
      access: 'operator',
      body: z.object({
        url: z.string().min(1).max(2048),
        event_types: z.array(z.enum(EVENT_TYPES)).min(1).max(EVENT_TYPES.length),
        description: z.string().max(500).optional(),
        format: z.enum(['json', 'cloudevents']).default('json'),
      }),
      response: subscription.extend({ secret: z.string() }),
      status: 201,
      errors: [422, 503],
      handler: async ({ body, caller, services }) => {
        if (body.format === 'cloudevents' && !services.cloudEvents) throw new NotConfigured('plugin interop', 'CloudEvents bodies come from the interop plugin');
        const why = await refuseUrl(body.url);
        if (why) throw invalid(['body', 'url'], why);
        const row = {
          id: crypto.randomUUID(),
          tenant_id: caller!.tenantId,
          url: body.url,
          event_types: JSON.stringify([...new Set(body.event_types)]),
          description: body.description ?? null,
          format: body.format,
          secret: `whsec_${crypto.randomBytes(32).toString('base64url')}`,
          created_by: caller!.id,
          created_at: nowIso(),
        };
        await services.db('alert_subscriptions').insert(row);
        await services.dispatcher.reload();
        return toSubscription(row);
      },
    }),
    route({
      method: 'delete',
      path: '/subscriptions/{subscription_id}',
      summary: 'Delete a subscription and its delivery record; waiting retries are dropped',
      access: 'operator',
      params: subParams,
      status: 204,
      errors: [404],
      handler: async ({ params, caller, services }) => {
        const sub = await ownSubscription(services, caller!.tenantId, params.subscription_id);
        await services.db.transaction(async (trx) => {
          await trx('alert_deliveries').where({ subscription_id: sub.id, tenant_id: sub.tenant_id }).delete();
          await trx('alert_subscriptions').where({ id: sub.id, tenant_id: sub.tenant_id }).delete();
        });
        await services.dispatcher.reload();
      },
    }),
    route({
      method: 'get',
      path: '/subscriptions/{subscription_id}/deliveries',
      summary: 'Every delivery attempt of a subscription, newest first',
      access: 'operator',
      params: subParams,
      query: z.object(page),
      response: z.object({
        deliveries: z.array(
          z.object({
            id: z.string(),
            delivery_id: z.string(),
            subscription_id: z.string(),
            event_type: z.string(),
            event_timestamp: z.string(),
            attempt: z.number(),
            status: z.enum(['succeeded', 'failed']),
            response_status: z.number().nullable(),
            error: z.string().nullable(),
            duration_ms: z.number(),
            next_attempt_at: z.string().nullable(),
            created_at: z.string(),
          }),
        ),
        next_cursor: z.string().nullable(),
      }),
      errors: [404, 422],
      handler: async ({ params, query, caller, services }) => {
        const sub = await ownSubscription(services, caller!.tenantId, params.subscription_id);
        const q = services.db('alert_deliveries').where({ subscription_id: sub.id, tenant_id: sub.tenant_id });
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return {
          deliveries: items.map(({ tenant_id: _t, ...r }) => ({ ...r, attempt: Number(r.attempt), duration_ms: Number(r.duration_ms), response_status: r.response_status === null ? null : Number(r.response_status) })) as never,
          next_cursor,
        };
      },
    }),
  ],
});
