import type { NewSecurityEvent } from '../../core/contracts/security';
import type { Db } from '../../core/db';
import type { BusEvent, EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';

/** 404s on object routes by one caller within PROBE_WINDOW_MS that make one probe event. */
const PROBE_COUNT = 10;
const PROBE_WINDOW_MS = 60_000;

type Data = Record<string, any>;

/**
 * Turns bus events into security events: the refusals core publishes as `security.<kind>`
 * (see docs/groups/security.md for the list), operator actions on the mesh and chaos, and
 * nodes turning unhealthy. Returns the unsubscribe function.
 */
export function watchSources(events: EventBus, db: Db, record: (e: NewSecurityEvent) => Promise<unknown>, log: Logger, now: () => Date): () => void {
  const probes = new Map<string, { count: number; since: number; paths: string[] }>();
  const save = (e: NewSecurityEvent | null) => {
    if (e) record(e).catch((err: Error) => log.error({ err: err.message, category: e.category }, 'security event not recorded'));
  };
  // Failed logins name an e-mail; the event belongs to that account's tenant when it is one.
  const tenantOfEmail = async (email: string): Promise<string | null> => {
    const u = await db('users').where({ email: String(email).toLowerCase() }).first('tenant_id');
    return u?.tenant_id ?? null;
  };
  const login = (category: string, severity: NewSecurityEvent['severity']) => (ev: BusEvent) => {
    const d = ev.data as Data;
    tenantOfEmail(d.email).then(
      (tenant_id) => save({ tenant_id, source: 'auth', category, severity, actor: String(d.email).toLowerCase(), address: d.address ?? null, attributes: d.wait_seconds ? { wait_seconds: d.wait_seconds } : {} }),
      (err: Error) => log.error({ err: err.message }, 'security event not recorded'),
    );
  };
  const offs = [
    events.subscribe('security.login_failed', login('auth.login_failed', 'low')),
    events.subscribe('security.login_throttled', login('auth.login_throttled', 'medium')),
    events.subscribe('security.token_refused', (ev) => {
      const d = ev.data as Data;
      save({ tenant_id: null, source: 'auth', category: 'auth.token_refused', severity: 'low', address: d.address ?? null, attributes: { reason: d.reason, path: d.path } });
    }),
    events.subscribe('security.refresh_reuse', (ev) => {
      const d = ev.data as Data;
      save({ tenant_id: d.tenant_id, source: 'auth', category: 'auth.refresh_reuse', severity: 'high', actor: d.user_id, attributes: { family_id: d.family_id } });
    }),
    events.subscribe('security.forbidden', (ev) => {
      const d = ev.data as Data;
      save({ tenant_id: d.tenant_id, source: 'http', category: 'http.forbidden', severity: 'low', actor: d.user_id, address: d.address ?? null, attributes: { method: d.method, route: d.route, role: d.role } });
    }),
    events.subscribe('security.not_found', (ev) => {
      const d = ev.data as Data;
      const key = `${d.tenant_id}|${d.user_id}`;
      const t = now().getTime();
      let p = probes.get(key);
      if (!p || t - p.since > PROBE_WINDOW_MS) probes.set(key, (p = { count: 0, since: t, paths: [] }));
      p.count += 1;
      if (p.paths.length < 20) p.paths.push(`${d.method} ${d.path}`);
      if (probes.size > 10_000) for (const [k, v] of probes) if (t - v.since > PROBE_WINDOW_MS) probes.delete(k);
      if (p.count === PROBE_COUNT) {
        save({ tenant_id: d.tenant_id, source: 'http', category: 'http.not_found_probe', severity: 'medium', actor: d.user_id, address: d.address ?? null, attributes: { count: p.count, window_seconds: PROBE_WINDOW_MS / 1000, paths: p.paths } });
      }
    }),
    events.subscribe('security.rate_limited', (ev) => {
      const d = ev.data as Data;
      save({ tenant_id: d.tenant_id, source: 'limits', category: 'limits.rate_limited', severity: 'low', actor: d.tenant_id, attributes: { plan: d.plan, limit: d.limit, reset_at: d.reset_at } });
    }),
    events.subscribe('action_taken', (ev) => {
      const d = ev.data as Data;
      if (d.detail?.security_action_id) return; // our own responses
      const area = ['node', 'kernel', 'mesh'].includes(d.target_type) ? 'mesh' : /chaos/.test(`${d.target_type} ${d.action}`) ? 'chaos' : null;
      if (!area) return;
      save({
        tenant_id: d.tenant_id ?? null, source: area, category: `${area}.control`, severity: d.source === 'automated' ? 'info' : 'low',
        actor: d.actor, kernel_id: d.target_type === 'kernel' ? d.target_id : (d.detail?.kernel_id ?? null),
        attributes: { action: d.action, target_type: d.target_type, target_id: d.target_id, result: d.result, source: d.source },
      });
    }),
    events.subscribe('health_update', (ev) => {
      const d = ev.data as Data;
      if (d.health !== 'unhealthy' || !d.node_id) return;
      save({ tenant_id: null, source: 'mesh', category: 'mesh.node_unhealthy', severity: 'medium', actor: d.node_id, kernel_id: d.kernel_id, attributes: { previous: d.previous, reason: d.reason } });
    }),
  ];
  return () => offs.forEach((off) => off());
}
