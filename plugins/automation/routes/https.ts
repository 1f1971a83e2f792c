import { z } from 'zod';
import { nowIso } from '../../../core/db';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { StateConflict, coded } from '../errors';
import { gated, listenerStatus, tlsTarget, verifyResult } from '../schemas';

const statusBody = z.object({
  enabled: z.boolean(),
  listener: listenerStatus,
  certificate: z.object({ id: z.string(), names: z.array(z.string()), not_after: z.string().nullable(), days_left: z.number().nullable() }).nullable(),
});

export const httpsRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    ...gated,
    method: 'post',
    path: '/automation/https/enable',
    summary: 'Start the TLS listener (automation.https.port) with a provisioned certificate',
    description: 'The certificate must be active and of the caller\'s tenant. When the listener runs already, it switches to this certificate without dropping connections.',
    access: 'operator',
    body: z.object({ cert_id: z.uuid() }),
    response: statusBody,
    errors: [404, 409, 422, 503],
    handler: async ({ body, caller, services }) => {
      const a = services.automation;
      const cert = await a.certs.get(caller!.tenantId, body.cert_id);
      if (cert.state !== 'active') throw new StateConflict(cert.state, [], 'Only an active certificate can be served');
      try {
        await a.https.enable(cert);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw coded(409, 'PORT_IN_USE', `Port ${services.config.automation.https.port} is in use (automation.https.port)`);
        throw err;
      }
      const at = nowIso();
      await services.db('automation_https').insert({ id: 'main', enabled: true, cert_id: cert.id, enabled_by: caller!.id, created_at: at, updated_at: at }).onConflict('id').merge(['enabled', 'cert_id', 'enabled_by', 'updated_at']);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'enable_https', target_type: 'https_listener', target_id: String(a.https.port), result: 'succeeded', tenant_id: caller!.tenantId, detail: { cert_id: cert.id } });
      return status(a);
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/https/status',
    summary: 'Whether the TLS listener runs, on which port, with which certificate, and its handshake counters',
    access: 'viewer',
    response: statusBody,
    handler: ({ services }) => status(services.automation),
  }),
  route({
    ...gated,
    method: 'post',
    path: '/automation/https/verify',
    summary: 'A real TLS handshake against host:port (default: our own listener): chain, names, days left, protocol',
    access: 'operator',
    body: z.object({ host: tlsTarget.shape.host.optional(), port: tlsTarget.shape.port.optional(), servername: tlsTarget.shape.servername }),
    response: verifyResult,
    errors: [409, 422],
    handler: async ({ body, services }) => {
      const a = services.automation;
      let target = body.host && body.port ? { host: body.host, port: body.port, servername: body.servername } : null;
      if (!target) {
        const own = a.monitor.ownTarget();
        if (!own) throw new StateConflict('disabled', ['enable'], 'HTTPS is not enabled on this host; give host and port, or enable it first');
        target = { ...own, servername: body.servername ?? own.servername };
      }
      return a.monitor.verify(target);
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/monitoring/https/metrics',
    summary: 'Handshake counts of the listener and of every watched host, from stored checks',
    access: 'viewer',
    response: z.object({
      listener: listenerStatus,
      checks: z.array(z.object({ target: z.string(), checks: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), mean_handshake_ms: z.number().nullable() })),
      method: z.string(),
    }),
    handler: ({ services }) => services.automation.monitor.metrics(),
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/monitoring/https/health',
    summary: 'Latest handshake of every watched host, and days left of every active certificate',
    access: 'viewer',
    response: z.object({
      healthy: z.boolean(),
      targets: z.array(z.object({ target: z.string(), ok: z.boolean(), authorized: z.boolean(), days_left: z.number().nullable(), protocol: z.string().nullable(), handshake_ms: z.number().nullable(), error: z.string().nullable(), checked_at: z.string() })),
      certificates: z.array(z.object({ id: z.string(), names: z.array(z.string()), days_left: z.number(), renew_due: z.boolean() })),
    }),
    handler: async ({ caller, services }) => {
      const a = services.automation;
      const targets = (await a.monitor.latest()) as Array<{ target: string; ok: boolean; authorized: boolean; days_left: number | null; protocol: string | null; handshake_ms: number | null; error: string | null; checked_at: string }>;
      const rows = await services.db('automation_certificates').where({ tenant_id: caller!.tenantId, state: 'active' }).orderBy('not_after');
      const renewDays = services.config.automation.certificates.renewBeforeDays;
      const certificates = rows.map((r) => {
        const days = Math.floor(((Date.parse(r.not_after) - a.now().getTime()) / 86400_000) * 100) / 100;
        return { id: r.id as string, names: JSON.parse(r.names) as string[], days_left: days, renew_due: days <= renewDays };
      });
      return { healthy: targets.every((t) => t.ok && t.authorized) && certificates.every((c) => c.days_left > 0), targets, certificates };
    },
  }),
  route({
    ...gated,
    method: 'post',
    path: '/automation/monitoring/https/update',
    summary: 'Set the hosts whose TLS endpoints the scheduler checks (replaces the list)',
    access: 'operator',
    body: z.object({ targets: z.array(tlsTarget).max(100) }),
    response: z.object({ targets: z.array(tlsTarget.extend({ servername: z.string().nullable() })) }),
    errors: [422],
    handler: async ({ body, caller, services }) => {
      const targets = await services.automation.monitor.setTargets(body.targets);
      await services.actions.record({ source: 'manual', actor: caller!.id, action: 'update_https_targets', target_type: 'https_monitoring', target_id: 'targets', result: 'succeeded', tenant_id: caller!.tenantId, detail: { targets: targets.map((t) => `${t.host}:${t.port}`) } });
      return { targets };
    },
  }),
];

function status(a: Deps['automation']) {
  const cert = a.https.certificate;
  const days = cert?.not_after ? Math.floor(((Date.parse(cert.not_after) - a.now().getTime()) / 86400_000) * 100) / 100 : null;
  return {
    enabled: a.https.running,
    listener: a.https.status(),
    certificate: cert ? { id: cert.id, names: JSON.parse(cert.names) as string[], not_after: cert.not_after, days_left: days } : null,
  };
}
