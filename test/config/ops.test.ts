import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../core/config';

describe('config: slo and alerts sections', () => {
  it('has SLO objectives for trading, llm and analytics, and a default for other domains', () => {
    const c = loadConfig({});
    expect(Object.keys(c.slo.domains)).to.deep.equal(['trading', 'llm', 'analytics']);
    expect(c.slo.domains.trading).to.deep.equal({ availability: 0.999, latencyP99Ms: 250, windowSeconds: 30 * 86400 });
    expect(c.slo.default).to.deep.equal({ availability: 0.99, latencyP99Ms: 1000, windowSeconds: 30 * 86400 });
    const custom = loadConfig({}, { slo: { domains: { risk: { availability: 0.95 } } } });
    expect(custom.slo.domains).to.deep.equal({ risk: { availability: 0.95, latencyP99Ms: 1000, windowSeconds: 30 * 86400 } });
  });

  it('refuses objectives out of range, naming the key', () => {
    expect(() => loadConfig({}, { slo: { domains: { llm: { availability: 1.5 } } } })).to.throw(ConfigError, /"slo.domains.llm.availability"/);
    expect(() => loadConfig({}, { slo: { default: { latencyP99Ms: 0 } } })).to.throw(ConfigError, /"slo.default.latencyP99Ms"/);
    expect(() => loadConfig({}, { slo: { domains: { 'Bad Name': {} } } })).to.throw(ConfigError, /slo.domains/);
    expect(() => loadConfig({}, { alerts: { maxAttempts: 0 } })).to.throw(ConfigError, /"alerts.maxAttempts"/);
  });

  it('has bounded alert delivery defaults', () => {
    expect(loadConfig({}).alerts).to.deep.equal({ maxAttempts: 5, retryBaseMs: 1000, retryMaxMs: 60000, timeoutMs: 5000, concurrency: 4, queueLimit: 10000 });
  });
});
