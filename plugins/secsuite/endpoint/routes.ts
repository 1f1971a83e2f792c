import crypto from 'node:crypto';
import { invalid, NotConfigured, NotFound, StateConflict } from '../../../core/errors';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import { audit, type Deps } from '../deps';
import { pusherOf, newKey } from './keys';
import * as s from './schemas';
import { ingest, matchIndicators, recordOf, type Kind } from './store';
import { parseBundle, normalIndicator } from './stix';
import { callVendor, VENDOR_URL_KEY, vendorConfigured } from './vendor';

const P = '/endpointsec';
const feature = 'secsuite' as const;

/** Pushes from agents and forwarders, keys, indicators, and the containment responses. */
export function endpointRoutes(route: RouteMaker<Deps>): RouteDef[] {
  const push = (path: string, kind: Kind, item: typeof s.endpointEvent | typeof s.detection | typeof s.identityEvent, summary: string) =>
    route({
      method: 'post', path: `${P}${path}`, summary, access: 'public', feature,
      description: 'Authenticated by a member token, an integration key (X-Integration-Key), or a key id with an HMAC-signed body (X-Integration-Key-Id, X-Signature).',
      body: s.batchOf(item), response: s.ingestResponse, status: 201, errors: [401, 403, 422],
      handler: async ({ body, caller, req, services }) => {
        const who = await pusherOf(req, caller, services.db, services.clock.now().toISOString());
        return ingest(services, who.tenantId, who.keyId, kind, body.items);
      },
    });
  return [
    push('/events', 'event', s.endpointEvent, 'Push endpoint events (process, file, network activity)'),
    push('/detections', 'detection', s.detection, 'Push detections; each is matched against the indicator store'),
    push('/identity-events', 'identity', s.identityEvent, 'Push identity events (logins, MFA, privilege changes)'),
    route({
      method: 'post', path: `${P}/keys`, summary: 'Create an integration key (shown once; stored hashed)', access: 'operator', feature,
      body: s.keyBody, response: s.keyResponse, status: 201, errors: [422],
      handler: async ({ body, caller, services }) => {
        const k = newKey();
        const row = { id: crypto.randomUUID(), tenant_id: caller!.tenantId, name: body.name, key_hash: k.hash, hint: k.hint, created_at: services.clock.now().toISOString(), refused_uses: 0 };
        await services.db('endpointsec_keys').insert(row);
        await services.sec.recordAction({ tenant_id: caller!.tenantId, action: 'create_integration_key', target_type: 'integration_key', target_id: row.id, trigger: 'operator', actor: caller!.id, result: 'succeeded', detail: { name: body.name } });
        return { id: row.id, name: row.name, key: k.key, hint: k.hint, created_at: row.created_at };
      },
    }),
    route({
      method: 'post', path: `${P}/intelligence/indicators`, summary: 'Load indicators: a list, or a STIX 2.1 bundle (JSON)', access: 'member', feature,
      body: s.indicatorLoad, response: s.indicatorLoadResponse, status: 201, errors: [422],
      handler: async ({ body, caller, services }) => {
        let parsed: ReturnType<typeof parseBundle> = { indicators: [], skipped: [] };
        if (body.stix_bundle) {
          try {
            parsed = parseBundle(body.stix_bundle);
          } catch (err) {
            throw invalid(['body', 'stix_bundle'], (err as Error).message);
          }
        }
        if (!body.indicators.length && !parsed.indicators.length && !body.stix_bundle) throw invalid(['body'], 'give indicators or a stix_bundle');
        const now = services.clock.now().toISOString();
        const rows = [
          ...body.indicators.map((i) => ({ type: i.type, value: normalIndicator(i.type, i.value), stix_id: null, name: i.name ?? null, labels: i.labels, valid_until: null })),
          ...parsed.indicators,
        ].map((i) => ({ id: crypto.randomUUID(), tenant_id: caller!.tenantId, source: body.stix_bundle && i.stix_id ? 'stix' : body.source, created_at: now, ...i, labels: JSON.stringify(i.labels) }));
        await services.db.transaction(async (trx) => {
          for (let i = 0; i < rows.length; i += 200) await trx('endpointsec_indicators').insert(rows.slice(i, i + 200));
        });
        await audit(services, caller!, 'load_indicators', 'indicator_store', caller!.tenantId, { loaded: rows.length, skipped: parsed.skipped.length, source: body.stix_bundle ? 'stix' : body.source });
        return { loaded: rows.length, skipped: parsed.skipped };
      },
    }),
    ...(['quarantine', 'unquarantine'] as const).map((verb) =>
      route({
        method: 'post', path: `${P}/${verb}`, summary: verb === 'quarantine' ? 'Contain a device: its data is refused and the vendor is asked to isolate it' : 'Release a contained device', access: 'operator', feature,
        body: s.containBody, response: s.containResponse, errors: [404, 409, 422, 503],
        handler: async ({ body, caller, services }) => {
          const dev = await services.db('endpointsec_devices').where({ tenant_id: caller!.tenantId, device_id: body.device_id }).first();
          if (!dev) throw new NotFound(`Device "${body.device_id}" not found (a device is known once it has pushed data)`, 'DEVICE_NOT_FOUND');
          const want = verb === 'quarantine' ? 'contained' : 'normal';
          if (dev.containment === want) throw new StateConflict(dev.containment, [dev.containment === 'contained' ? 'unquarantine' : 'quarantine'], `Device ${body.device_id} is already ${dev.containment}`);
          if (body.require_vendor && !vendorConfigured(services.config)) throw new NotConfigured(VENDOR_URL_KEY);
          const now = services.clock.now().toISOString();
          await services.db('endpointsec_devices').where({ id: dev.id }).update({ containment: want, updated_at: now });
          const vendor = await callVendor(services.config, verb, { tenant_id: caller!.tenantId, device_id: body.device_id, reason: body.reason ?? null });
          const action = await services.sec.recordAction({
            tenant_id: caller!.tenantId, action: verb === 'quarantine' ? 'quarantine_device' : 'unquarantine_device', target_type: 'device', target_id: body.device_id,
            trigger: 'connector', actor: caller!.id, result: 'succeeded', detail: { reason: body.reason ?? null, vendor: vendor.status },
          });
          const { id: _i, tenant_id: _t, created_at: _c, ...view } = { ...dev, containment: want, updated_at: now };
          return { device: view, action_id: action.id, vendor };
        },
      }),
    ),
    route({
      method: 'post', path: `${P}/disable-user`, summary: 'Disable a user: a platform user is refused login with every session revoked; other identities go to the vendor', access: 'operator', feature,
      body: s.disableBody, response: s.disableResponse, errors: [409, 422, 503],
      handler: async ({ body, caller, services }) => {
        if (body.identity.toLowerCase() === caller!.email?.toLowerCase() || body.identity === caller!.id) throw new StateConflict('self', [], 'An operator cannot disable their own account');
        const action = await services.sec.disableUser({ tenant_id: caller!.tenantId, identity: body.identity, actor: caller!.id, trigger: 'connector', reason: body.reason ?? 'endpoint security' });
        if (action) return { identity: body.identity, platform_user: true, action_id: action.id, vendor: { status: 'not_needed' as const, config_key: null, detail: 'a platform user: disabled on the platform' } };
        if (!vendorConfigured(services.config)) throw new NotConfigured(VENDOR_URL_KEY);
        const vendor = await callVendor(services.config, 'disable_user', { tenant_id: caller!.tenantId, identity: body.identity, reason: body.reason ?? null });
        const a = await services.sec.recordAction({ tenant_id: caller!.tenantId, action: 'disable_user', target_type: 'identity', target_id: body.identity, trigger: 'connector', actor: caller!.id, result: vendor.status === 'applied' ? 'succeeded' : 'failed', detail: { vendor: vendor.status, detail: vendor.detail } });
        return { identity: body.identity, platform_user: false, action_id: a.id, vendor };
      },
    }),
    route({
      method: 'post', path: `${P}/detections/{id}/match-intelligence`, summary: "Match a detection's indicators against the indicator store", access: 'member', feature,
      params: s.idParams, response: s.matchResponse, errors: [404],
      handler: async ({ params, caller, services }) => {
        const row = await services.db('endpointsec_records').where({ id: params.id, tenant_id: caller!.tenantId, kind: 'detection' }).first();
        if (!row) throw new NotFound('Detection not found', 'DETECTION_NOT_FOUND');
        const det = recordOf(row);
        const matches = await matchIndicators(services, caller!.tenantId, det.indicators);
        await services.db('endpointsec_records').where({ id: row.id }).update({ intel_matches: matches.length });
        const checked = det.indicators.hashes.length + det.indicators.ips.length + det.indicators.domains.length + det.indicators.urls.length;
        return { detection_id: row.id, checked, matches, method: 'exact match of hashes and URLs; domains match themselves and parent domains; addresses match indicator networks that cover them (CIDR); expired indicators skipped' };
      },
    }),
  ];
}
