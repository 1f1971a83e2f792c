import { expect } from 'chai';
import { loadConfig } from '../../core/config';
import { Telemetry } from '../../core/telemetry/service';

describe('keyed histograms (ingested-event metrics collected with the SDK)', () => {
  it('puts a value in the first bucket whose bound is >= it, and the readers export it', async () => {
    const telemetry = new Telemetry(loadConfig({}, {}), 'test');
    const h = telemetry.keyedHistograms.create('test.latency', { description: 'test', unit: 's', boundaries: [10, 100] });
    for (const v of [5, 10, 11, 1000]) h.record('a', () => ({ route: 'a' }), v);
    h.record('b', () => ({ route: 'b' }), 50);
    const text = await telemetry.prometheusText();
    expect(text).to.match(/test_latency_bucket\{route="a",le="10"\} 2\n/);
    expect(text).to.match(/test_latency_bucket\{route="a",le="100"\} 3\n/);
    expect(text).to.match(/test_latency_bucket\{route="a",le="\+Inf"\} 4\n/);
    expect(text).to.match(/test_latency_sum\{[^}]*route="a"[^}]*\} 1026\n/);
    expect(text).to.match(/test_latency_count\{[^}]*route="b"[^}]*\} 1\n/);
  });

  it('sends label sets past the cardinality limit to one overflow series', async () => {
    const telemetry = new Telemetry(loadConfig({}, {}), 'test');
    const h = telemetry.keyedHistograms.create('test.many', { description: 'test', boundaries: [1] });
    for (let i = 0; i < 2100; i++) h.record(`k${i}`, () => ({ k: String(i) }), 0.5);
    const { scopeMetrics } = await telemetry.collect();
    const metric = scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'test.many')!;
    expect(metric.dataPoints).to.have.length(2001);
    const overflow = metric.dataPoints.find((p) => p.attributes['otel.metric.overflow'] === true)!;
    expect((overflow.value as { count: number }).count).to.equal(100);
  });
});
