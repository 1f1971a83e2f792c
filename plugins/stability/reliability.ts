import type { Services } from '../../core/services';

interface StressRow { id: string; tenant_id: string | null; definition: string; result: string | null; finished_at: string | null }

/**
 * Per kernel, from the succeeded stress tests that targeted it (all tenants' tests: the
 * envelope is the platform's; only the caller's own tests show their ids): the highest throughput at which the kernel met its SLO
 * (p95 latency and error rate of its manifest) and the lowest at which it did not.
 */
export async function envelope(services: Pick<Services, 'db' | 'mesh'>, tenantId: string) {
  const rows: StressRow[] = await services.db('stability_runs').where({ kind: 'stress_test', state: 'succeeded' }).orderBy('created_at').select('id', 'tenant_id', 'definition', 'result', 'finished_at');
  return services.mesh.kernels().map((k) => {
    const tests = rows
      .map((r) => ({ r, def: JSON.parse(r.definition), res: r.result ? JSON.parse(r.result) : null }))
      .filter(({ def, res }) => def.target?.kind === 'kernel_task' && def.target.domain === k.id && res?.load?.latency_ms)
      .map(({ r, def, res }) => ({ test_id: r.tenant_id === tenantId ? r.id : null, at: r.finished_at, offered_per_s: def.rate_per_second, throughput_per_s: res.load.throughput_per_s, p95_ms: res.load.latency_ms.p95, error_rate: res.error_rate, met_slo: res.load.latency_ms.p95 <= k.slo.latency_p95_ms && res.error_rate <= k.slo.error_rate }));
    const met = tests.filter((t) => t.met_slo);
    const missed = tests.filter((t) => !t.met_slo);
    return {
      kernel_id: k.id,
      slo: k.slo,
      status: tests.length ? ('measured' as const) : ('unmeasured' as const),
      max_throughput_within_slo_per_s: met.length ? Math.max(...met.map((t) => t.throughput_per_s)) : null,
      min_throughput_breaking_slo_per_s: missed.length ? Math.min(...missed.map((t) => t.throughput_per_s)) : null,
      tests,
    };
  });
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The load of each kernel over the last `windowSeconds` (task outcomes) against its envelope. */
export async function check(services: Pick<Services, 'db' | 'mesh'>, tenantId: string, windowSeconds: number) {
  const since = new Date(Date.now() - windowSeconds * 1000).toISOString();
  const env = await envelope(services, tenantId);
  const out = [];
  for (const e of env) {
    const rows = await services.db('task_outcomes').where('kernel_id', e.kernel_id).andWhere('at', '>=', since).orderBy('seq', 'desc').limit(20_000).select('ok', 'duration_ms');
    const durations = rows.map((r) => Number(r.duration_ms)).sort((a, b) => a - b);
    const errors = rows.filter((r) => !r.ok).length;
    const rate = rows.length / windowSeconds;
    const p95 = durations.length ? durations[Math.min(durations.length - 1, Math.ceil(0.95 * durations.length) - 1)]! : null;
    const limit = e.max_throughput_within_slo_per_s;
    const broke = e.min_throughput_breaking_slo_per_s;
    // Without a load known to meet the SLO, only a load at or past a known breaking point is judged.
    const status = limit !== null ? (rate > limit ? 'over' : rate > 0.8 * limit ? 'near' : 'within') : broke !== null && rate >= broke ? 'over' : 'unknown';
    out.push({ kernel_id: e.kernel_id, tasks: rows.length, rate_per_s: r3(rate), p95_ms: p95 === null ? null : r3(p95), error_rate: rows.length ? r3(errors / rows.length) : null, envelope_per_s: limit, headroom_pct: limit ? r3(((limit - rate) / limit) * 100) : null, status });
  }
  return out;
}
