// The operations console end to end: a failing kernel node opens an incident by itself, an
// alert reaches a webhook receiver, mitigation drains the node, the SLO shows the burn, the
// incident is resolved and closed, and every step is in the actions history.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import actionsHistory from '../../plugins/actions-history';
import alerts from '../../plugins/alerts';
import incidents from '../../plugins/incidents';
import kernels from '../../plugins/kernels';
import slo from '../../plugins/slo';
import { BUILTIN_KERNELS, FIXTURE_KERNELS } from '../core/mesh-helpers';
import { eventually } from '../helpers/eventually';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

interface Hook {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver() {
  const got: Hook[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, url, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

eachDatabase('operations console story', (db) => {
  let t: TestHost;
  let rx: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    rx = await receiver();
    t = await startHost({
      db,
      plugins: [kernels, incidents, alerts, actionsHistory, slo],
      config: {
        mesh: {
          kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS],
          only: ['probe'],
          heartbeatMs: 100,
          kernels: { probe: { nodes: 2 } },
          health: { windowSeconds: 10, minSamples: 5 },
          // The story is about one failing node; the kernel's breaker stays closed.
          breaker: { volumeThreshold: 1000 },
        },
        slo: { domains: { probe: { availability: 0.99, latencyP99Ms: 5000, windowSeconds: 60 } } },
        alerts: { retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 3, timeoutMs: 1000 },
      },
    });
  });
  after(async () => {
    await t.stop();
    await rx.close();
  });

  it('fail, detect, alert, mitigate, burn, resolve, close: all recorded', async () => {
    const op = await t.userToken('operator');
    const member = await t.userToken('member');
    const sub = await t.request('POST', '/ops/alerts/subscriptions', { token: op.token, body: { url: rx.url, event_types: ['incident'] } });
    expect(sub.status).to.equal(201);

    // 1. Node probe-2 fails every task it gets; real tasks go to both nodes.
    t.host.services.mesh.setControl('probe-2', { error_rate: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await t.request('POST', '/kernels/probe/tasks/wait', { token: member.token, body: { ms: 1 } })).status);
    expect(statuses.filter((s) => s === 502)).to.have.length(10);
    expect(statuses.filter((s) => s === 200)).to.have.length(10);

    // 2. The mesh's health derivation turns the node unhealthy; an incident opens by itself.
    const incident = await eventually(async () => {
      const r = await t.request('GET', '/ops/incidents/active', { token: op.token });
      return r.body.incidents.find((i: { cause: string }) => i.cause === 'health:node:probe-2');
    });
    expect(incident).to.include({ source: 'automated', state: 'open', node_id: 'probe-2', kernel_id: 'probe', tenant_id: null });
    expect(incident.title).to.match(/Node probe-2 unhealthy: .*error rate 100%/);

    // 3. The alert reaches the receiver, signed with the subscription's secret.
    const opened = await eventually(async () => rx.got.find((h) => JSON.parse(h.body).data.change === 'opened'));
    const sig = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(opened.headers['x-alert-signature']))!;
    expect(sig[2]).to.equal(crypto.createHmac('sha256', sub.body.secret).update(`${sig[1]}.${opened.body}`).digest('hex'));
    expect(JSON.parse(opened.body).data.incident.id).to.equal(incident.id);

    // 4. Mitigation drains the node on the real mesh; work goes on on the other node.
    const m = await t.request('POST', `/incidents/${incident.id}/mitigate`, { token: op.token, body: { action: 'drain_node', target: 'probe-2' } });
    expect(m.status).to.equal(200);
    expect(m.body.state).to.equal('mitigated');
    expect(t.host.services.mesh.node('probe-2').state).to.equal('draining');
    for (let i = 0; i < 3; i++) expect((await t.request('POST', '/kernels/probe/tasks/wait', { token: member.token, body: { ms: 1 } })).status).to.equal(200);

    // 5. The SLO shows the burn: 10 of 23 tasks failed against a 99% objective.
    const s = await t.request('GET', '/ops/slo/probe', { token: member.token });
    expect(s.body).to.include({ tasks: 23, failed: 10, status: 'breached', availability_met: false });
    expect(s.body.burn_rate).to.be.closeTo(10 / 23 / 0.01, 1e-3);
    expect(s.body.error_budget.remaining).to.be.below(0);

    // 6. Resolved and closed.
    expect((await t.request('POST', `/ops/incidents/${incident.id}/resolve`, { token: op.token, body: { note: 'node drained' } })).status).to.equal(200);
    const closed = await t.request('POST', `/incidents/${incident.id}/close`, { token: op.token });
    expect(closed.body.state).to.equal('closed');
    expect(closed.body.timeline.map((e: { kind: string }) => e.kind).filter((k: string) => k !== 'recurred' && k !== 'cause_cleared')).to.deep.equal(['opened', 'mitigated', 'resolved', 'closed']);
    await eventually(async () => ['mitigated', 'resolved', 'closed'].every((c) => rx.got.some((h) => JSON.parse(h.body).data.change === c)));

    // 7. Every step is in the actions history.
    const h = (await t.request('GET', '/ops/actions/history?limit=500', { token: op.token })).body.actions as Array<Record<string, any>>;
    const has = (action: string, target: string, more: Record<string, unknown> = {}) => {
      const a = h.find((x) => x.action === action && x.target_id === target);
      expect(a, `${action} ${target}`).to.not.equal(undefined);
      expect(a).to.include({ result: 'succeeded', ...more });
    };
    has('open_incident', incident.id, { source: 'automated', actor: 'incidents' });
    has('drain_node', 'probe-2', { source: 'manual', actor: op.userId, cause: incident.id });
    has('mitigate_incident', incident.id, { source: 'manual', actor: op.userId });
    has('resolve_incident', incident.id, { source: 'manual' });
    has('close_incident', incident.id, { source: 'manual' });
    const order = ['open_incident', 'drain_node', 'mitigate_incident', 'resolve_incident', 'close_incident'].map((a) => h.findIndex((x) => x.action === a));
    expect([...order].sort((a, b) => b - a)).to.deep.equal(order);
  });
});
