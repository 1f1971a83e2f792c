import type { Services } from '../../core/services';

type S = Pick<Services, 'db' | 'mesh' | 'config' | 'health' | 'lifecycle'>;
type Gate = { id: string; status: 'pass' | 'fail' | 'unknown'; detail: Record<string, unknown> };

/** The go/no-go roll-up: each gate from stored or measured state; any gate not passing blocks. */
export async function readiness(s: S) {
  const gates: Gate[] = [];
  const health = await s.health.checkAll();
  const bad = Object.entries(health).filter(([, h]) => h.status === 'unhealthy');
  gates.push({ id: 'readiness', status: s.lifecycle.ready && !bad.length ? 'pass' : 'fail', detail: { host_state: s.lifecycle.state, unhealthy_components: bad.map(([n]) => n) } });

  const hard = await s.db('stability_checks').where({ kind: 'hardening' }).orderBy('created_at', 'desc').first();
  if (!hard) gates.push({ id: 'hardening', status: 'unknown', detail: { reason: 'never validated: POST /stability/hardening/validate' } });
  else {
    const checks = JSON.parse(hard.result) as Array<{ id: string; status: string }>;
    const failed = checks.filter((c) => c.status === 'fail').map((c) => c.id);
    gates.push({ id: 'hardening', status: failed.length ? 'fail' : 'pass', detail: { validated_at: hard.created_at, failed } });
  }

  const sim = await s.db('stability_runs').where({ kind: 'attack_simulation', state: 'succeeded' }).orderBy('created_at', 'desc').first();
  if (!sim) gates.push({ id: 'tenant_isolation', status: 'unknown', detail: { reason: 'no attack simulation has finished: POST /stability/tenant_isolation/attack_simulation' } });
  else {
    const r = JSON.parse(sim.result);
    gates.push({ id: 'tenant_isolation', status: r.leaks ? 'fail' : 'pass', detail: { simulation_id: sim.id, finished_at: sim.finished_at, leaks: r.leaks, attempts: r.attempts_total } });
  }

  const since = new Date(Date.now() - 3600_000).toISOString();
  const slos = [];
  for (const k of s.mesh.kernels()) {
    const target = s.config.slo.domains[k.id] ?? s.config.slo.default;
    const rows = await s.db('task_outcomes').where('kernel_id', k.id).andWhere('at', '>=', since).orderBy('seq', 'desc').limit(20_000).select('ok', 'duration_ms');
    const okCount = rows.filter((r) => r.ok).length;
    const durations = rows.map((r) => Number(r.duration_ms)).sort((x, y) => x - y);
    const p99 = durations.length ? durations[Math.min(durations.length - 1, Math.ceil(0.99 * durations.length) - 1)]! : null;
    const availability = rows.length ? okCount / rows.length : null;
    const met = availability === null ? null : availability >= target.availability && (p99 ?? 0) <= target.latencyP99Ms;
    slos.push({ kernel_id: k.id, tasks: rows.length, availability, p99_ms: p99, target: { availability: target.availability, latency_p99_ms: target.latencyP99Ms }, met });
  }
  const missed = slos.filter((x) => x.met === false).map((x) => x.kernel_id);
  gates.push({ id: 'slos', status: missed.length ? 'fail' : 'pass', detail: { window: 'last hour', missed, kernels: slos } });

  if (await s.db.schema.hasTable('incidents')) {
    const open = await s.db('incidents').whereIn('state', ['open', 'mitigated']).whereIn('severity', ['high', 'critical']).select('id', 'severity', 'title');
    gates.push({ id: 'open_incidents', status: open.length ? 'fail' : 'pass', detail: { open_high_or_critical: open.length, incidents: open.slice(0, 20) } });
  } else gates.push({ id: 'open_incidents', status: 'unknown', detail: { reason: 'the incidents plugin is not loaded' } });

  const blockers = gates.filter((g) => g.status !== 'pass').map((g) => g.id);
  return {
    decision: blockers.length ? ('no_go' as const) : ('go' as const),
    blockers,
    gates,
    method: 'every gate must pass: host ready and no unhealthy component, the latest hardening validation without failures, the latest attack simulation without leaks, every kernel within its SLO over the last hour, no open high or critical incident',
    window: { since, until: new Date().toISOString() },
    inputs: ['health registry', 'stability_checks (hardening)', 'stability_runs (attack_simulation)', 'task_outcomes', 'config slo', 'incidents'],
  };
}
