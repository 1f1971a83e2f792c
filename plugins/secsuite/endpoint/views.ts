import { z } from 'zod';
import { pageOf } from '../../../core/pagination';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import * as s from './schemas';
import { recordOf } from './store';
import { probeVendor } from './vendor';

type Row = Record<string, any>;
const P = '/endpointsec';
const feature = 'secsuite' as const;
const DAY = 86_400_000;
/** Risk weight of one detection by severity (doubling per step). */
const WEIGHTS: Record<string, number> = { info: 1, low: 2, medium: 4, high: 8, critical: 16 };
/** An indicator match counts as this many extra weight units. */
const INTEL_WEIGHT = 8;

const historyAction = z.object({ id: z.string(), action: z.string(), target_type: z.string(), target_id: z.string(), trigger: z.string(), actor: z.string(), result: z.string(), detail: z.record(z.string(), z.unknown()), undone_at: z.string().nullable(), created_at: z.string() });

/** Reads: lists, health, intelligence summary, metrics, and the per-device risk prediction. */
export function endpointViews(route: RouteMaker<Deps>): RouteDef[] {
  const list = (path: string, kind: 'event' | 'detection', key: 'events' | 'detections') =>
    route({
      method: 'get', path: `${P}${path}`, summary: `Pushed ${key}, newest first`, access: 'viewer', feature,
      query: s.recordsQuery, response: z.object({ [key]: z.array(s.record), next_cursor: z.string().nullable() }), errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = services.db('endpointsec_records').where({ tenant_id: caller!.tenantId, kind });
        if (query.device_id) q.where('device_id', query.device_id);
        if (query.severity) q.where('severity', query.severity);
        if (query.type) q.where('type', query.type);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { [key]: items.map(recordOf), next_cursor } as never;
      },
    });
  return [
    list('/events', 'event', 'events'),
    list('/detections', 'detection', 'detections'),
    route({
      method: 'get', path: `${P}/health`, summary: 'Last data per source, device containment, and the vendor adapter reachability', access: 'viewer', feature,
      response: z.object({
        sources: z.array(z.object({ source: z.string(), last_received_at: z.string(), records_24h: z.number().int() })),
        devices: z.object({ total: z.number().int(), contained: z.number().int() }),
        keys: z.object({ active: z.number().int() }),
        adapter: z.object({ kind: z.string(), configured: z.boolean(), reachable: z.boolean().nullable(), latency_ms: z.number().nullable(), detail: z.string() }),
      }),
      handler: async ({ caller, services }) => {
        const t = caller!.tenantId;
        const day = new Date(services.clock.now().getTime() - DAY).toISOString();
        const sources: Row[] = await services.db('endpointsec_records').where({ tenant_id: t }).select('source').max({ last: 'created_at' }).groupBy('source').orderBy('source');
        const recent: Row[] = await services.db('endpointsec_records').where({ tenant_id: t }).where('created_at', '>=', day).select('source').count({ n: '*' }).groupBy('source');
        const counts = new Map(recent.map((r) => [r.source as string, Number(r.n)]));
        const devices: Row[] = await services.db('endpointsec_devices').where({ tenant_id: t }).select('containment').count({ n: '*' }).groupBy('containment');
        const keys = await services.db('endpointsec_keys').where({ tenant_id: t }).whereNull('revoked_at').count({ n: '*' }).first();
        const byState = new Map<string, number>(devices.map((r) => [r.containment as string, Number(r.n)]));
        return {
          sources: sources.map((r) => ({ source: r.source as string, last_received_at: r.last as string, records_24h: counts.get(r.source as string) ?? 0 })),
          devices: { total: [...byState.values()].reduce((a, b) => a + b, 0), contained: byState.get('contained') ?? 0 },
          keys: { active: Number(keys?.n ?? 0) },
          adapter: { kind: 'webhook', ...(await probeVendor(services.config)) },
        };
      },
    }),
    route({
      method: 'get', path: `${P}/response-history`, summary: 'Containment and user responses taken through the connector', access: 'viewer', feature,
      query: s.recordsQuery.pick({ limit: true, cursor: true }), response: z.object({ actions: z.array(historyAction), next_cursor: z.string().nullable() }), errors: [422],
      handler: ({ query, caller, services }) =>
        services.sec.actions(caller!.tenantId, { actions: ['quarantine_device', 'unquarantine_device', 'disable_user'] }, query.limit, query.cursor),
    }),
    route({
      method: 'get', path: `${P}/intelligence/summary`, summary: 'Indicator store by type and source, and detections that matched', access: 'viewer', feature,
      response: z.object({
        indicators: z.object({ total: z.number().int(), active: z.number().int(), by_type: z.record(z.string(), z.number().int()), by_source: z.array(z.object({ source: z.string(), count: z.number().int(), last_loaded_at: z.string() })) }),
        detections: z.object({ total: z.number().int(), matched: z.number().int(), matches: z.number().int() }),
      }),
      handler: async ({ caller, services }) => {
        const t = caller!.tenantId;
        const now = services.clock.now().toISOString();
        const byType: Row[] = await services.db('endpointsec_indicators').where({ tenant_id: t }).select('type').count({ n: '*' }).groupBy('type');
        const bySource: Row[] = await services.db('endpointsec_indicators').where({ tenant_id: t }).select('source').count({ n: '*' }).max({ last: 'created_at' }).groupBy('source').orderBy('source');
        const active = await services.db('endpointsec_indicators').where({ tenant_id: t }).where((w) => w.whereNull('valid_until').orWhere('valid_until', '>', now)).count({ n: '*' }).first();
        const det = await services.db('endpointsec_records').where({ tenant_id: t, kind: 'detection' })
          .select(services.db.raw('count(*) as n'), services.db.raw('sum(case when intel_matches > 0 then 1 else 0 end) as matched'), services.db.raw('sum(intel_matches) as matches')).first();
        const types = Object.fromEntries(['hash', 'ip', 'domain', 'url'].map((k) => [k, 0]));
        for (const r of byType) types[r.type as string] = Number(r.n);
        return {
          indicators: { total: Object.values(types).reduce((a, b) => a + b, 0), active: Number(active?.n ?? 0), by_type: types, by_source: bySource.map((r) => ({ source: r.source as string, count: Number(r.n), last_loaded_at: r.last as string })) },
          detections: { total: Number(det?.n ?? 0), matched: Number(det?.matched ?? 0), matches: Number(det?.matches ?? 0) },
        };
      },
    }),
    route({
      method: 'get', path: `${P}/metrics`, summary: 'Records by kind and severity, devices, responses and mean time to contain', access: 'viewer', feature,
      query: z.object({ window_days: z.coerce.number().int().min(1).max(365).default(30) }),
      response: z.object({
        window: z.object({ from: z.string(), to: z.string() }),
        records: z.array(z.object({ kind: z.string(), severity: z.string(), count: z.number().int() })),
        devices: z.object({ total: z.number().int(), contained: z.number().int() }),
        responses: z.array(z.object({ action: z.string(), count: z.number().int() })),
        time_to_contain_seconds: z.object({ count: z.number().int(), mean: z.number().nullable(), method: z.string() }),
      }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const t = caller!.tenantId;
        const to = services.clock.now();
        const from = new Date(to.getTime() - query.window_days * DAY).toISOString();
        const records: Row[] = await services.db('endpointsec_records').where({ tenant_id: t }).where('created_at', '>=', from).select('kind', 'severity').count({ n: '*' }).groupBy('kind', 'severity').orderBy(['kind', 'severity']);
        const devices = await services.db('endpointsec_devices').where({ tenant_id: t }).select('containment', 'device_id');
        const { actions } = await services.sec.actions(t, { actions: ['quarantine_device', 'unquarantine_device', 'disable_user'] }, 1000);
        const inWindow = actions.filter((a) => a.created_at >= from);
        const counts = new Map<string, number>();
        for (const a of inWindow) counts.set(a.action, (counts.get(a.action) ?? 0) + 1);
        // Time to contain: a quarantine minus the first detection of that device before it.
        const spans: number[] = [];
        for (const a of inWindow.filter((x) => x.action === 'quarantine_device')) {
          const first = await services.db('endpointsec_records').where({ tenant_id: t, kind: 'detection', device_id: a.target_id }).where('created_at', '<=', a.created_at).min({ at: 'created_at' }).first();
          if (first?.at) spans.push((Date.parse(a.created_at) - Date.parse(first.at)) / 1000);
        }
        return {
          window: { from, to: to.toISOString() },
          records: records.map((r) => ({ kind: r.kind as string, severity: r.severity as string, count: Number(r.n) })),
          devices: { total: devices.length, contained: devices.filter((d) => d.containment === 'contained').length },
          responses: [...counts].map(([action, count]) => ({ action, count })),
          time_to_contain_seconds: { count: spans.length, mean: spans.length ? spans.reduce((a, b) => a + b, 0) / spans.length : null, method: 'each quarantine in the window minus the first detection of that device before it' },
        };
      },
    }),
    route({
      method: 'post', path: `${P}/predict-threats`, summary: 'Per-device risk from detection history (severity-weighted, exponentially decayed), summed on the analytics kernel', access: 'member', feature,
      body: s.predictBody, response: s.predictResponse, errors: [422, 503],
      handler: async ({ body, caller, services }) => {
        const t = caller!.tenantId;
        const now = services.clock.now();
        const from = new Date(now.getTime() - body.window_days * DAY).toISOString();
        const dets = await services.db('endpointsec_records').where({ tenant_id: t, kind: 'detection' }).where('created_at', '>=', from).whereNotNull('device_id').select('device_id', 'severity', 'created_at', 'intel_matches').limit(200_000);
        const method = `risk = sum over detections of (weight(severity) + ${INTEL_WEIGHT} x indicator matches) x 0.5^(age / half_life); summed per device by the analytics kernel (aggregate)`;
        const inputs = { detections: dets.length, half_life_days: body.half_life_days, weights: WEIGHTS };
        const window = { from, to: now.toISOString() };
        if (!dets.length) return { devices: [], method, window, inputs };
        const rows = dets.map((d) => ({ key: d.device_id as string, value: (WEIGHTS[d.severity] + INTEL_WEIGHT * Number(d.intel_matches)) * 0.5 ** ((now.getTime() - Date.parse(d.created_at)) / DAY / body.half_life_days) }));
        const out = (await services.mesh.run('analytics', 'aggregate', { rows }, { caller })) as { groups: Array<{ key: string; count: number; sum: number }> };
        const devices = new Map((await services.db('endpointsec_devices').where({ tenant_id: t }).select('device_id', 'containment')).map((d) => [d.device_id as string, d.containment as string]));
        const last = new Map<string, string>();
        const matches = new Map<string, number>();
        for (const d of dets) {
          if ((last.get(d.device_id) ?? '') < d.created_at) last.set(d.device_id, d.created_at);
          matches.set(d.device_id, (matches.get(d.device_id) ?? 0) + Number(d.intel_matches));
        }
        const ranked = out.groups
          .map((g) => ({ device_id: g.key, risk: Math.round(g.sum * 1000) / 1000, detections: g.count, intel_matches: matches.get(g.key) ?? 0, last_detection_at: last.get(g.key)!, containment: devices.get(g.key) ?? 'normal' }))
          .sort((a, b) => b.risk - a.risk || a.device_id.localeCompare(b.device_id));
        return { devices: ranked, method, window, inputs };
      },
    }),
  ];
}

