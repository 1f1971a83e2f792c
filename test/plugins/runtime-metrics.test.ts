import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { eventually } from '../helpers/eventually';
import { startHost, type TestHost } from '../helpers/host';

/** The sample lines of one metric family. */
const lines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('runtime metrics on /metrics/ (OpenTelemetry runtime and host instrumentation)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost();
  });
  after(() => t.stop());

  it('shows heap per space, GC, event loop, CPU, memory and handles by their semantic-convention names, and promtool accepts it', async () => {
    // Work that makes the collectors see something: a task on a worker, and garbage for the GC.
    expect((await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [1, 2, 3] } })).status).to.equal(200);
    let text = '';
    await eventually(async () => {
      let junk: unknown[] = [];
      for (let i = 0; i < 200_000; i++) junk.push({ i, s: `x${i}` });
      junk = [];
      text = (await t.request('GET', '/metrics/', { token: null })).text;
      // GC pauses by kind, and a heartbeat that measured the worker.
      return lines(text, 'v8js_gc_duration_count').length > 0 && lines(text, 'kernel_thread_heap_used').length > 0;
    }, 15_000);
    for (const name of [
      'v8js_memory_heap_used',
      'v8js_memory_heap_space_size',
      'nodejs_eventloop_delay_p99',
      'nodejs_eventloop_utilization',
      'v8js_resource_active',
      'process_cpu_time_total',
      'process_memory_usage',
      'system_memory_usage',
      'kernel_node_threads',
      'kernel_thread_heap_limit',
      'kernel_thread_event_loop_delay_p99',
    ]) {
      expect(lines(text, name).length, name).to.be.above(0);
    }
    // Heap figures per V8 space, and GC pauses by kind.
    expect(lines(text, 'v8js_memory_heap_used').some((l) => l.includes('v8js_heap_space_name="old_space"'))).to.equal(true);
    expect(lines(text, 'v8js_gc_duration_count').some((l) => /v8js_gc_type="(minor|major|incremental|weakcb)"/.test(l))).to.equal(true);
    // The analytics node's one thread, measured by its heartbeat (bytes, above zero).
    const heap = lines(text, 'kernel_thread_heap_used').find((l) => l.includes('kernel="analytics"'));
    expect(heap, 'analytics thread heap').to.be.a('string');
    expect(Number(heap!.slice(heap!.lastIndexOf(' ') + 1))).to.be.above(1_000_000);
    // Every in-memory cache reports its size, and its bound where it has a fixed one.
    for (const cache of ['auth.verified_tokens', 'http.route_lookups', 'limits.budgets', 'limits.tenant_plans', 'telemetry.label_sets', 'telemetry.histogram_series']) {
      expect(lines(text, 'platform_cache_entries').some((l) => l.includes(`cache="${cache}"`)), cache).to.equal(true);
    }
    const verified = lines(text, 'platform_cache_entries').find((l) => l.includes('cache="auth.verified_tokens"'))!;
    expect(Number(verified.slice(verified.lastIndexOf(' ') + 1)), 'the admin token is remembered').to.be.at.least(1);
    expect(lines(text, 'platform_cache_limit').find((l) => l.includes('cache="auth.verified_tokens"'))).to.match(/ 10000$/);
    const out = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    expect(out).to.not.match(/error/i);
  });

  it('can be switched off', async () => {
    const off = await startHost({ config: { telemetry: { runtimeMetrics: false } } });
    try {
      const text = (await off.request('GET', '/metrics/', { token: null })).text;
      expect(lines(text, 'v8js_memory_heap_used')).to.deep.equal([]);
      expect(lines(text, 'kernel_queue_depth').length).to.be.above(0);
    } finally {
      await off.stop();
    }
  });
});
