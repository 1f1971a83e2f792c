import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { anyRoute as route } from '../helpers/host';
import { eventually } from '../helpers/eventually';
import { startHost } from '../helpers/host';
import { capturedLog } from '../helpers/log';

describe('stopping with requests in flight', () => {
  it('lets a handler whose client was cut off finish its database work before the database closes', async () => {
    const { lines, logger } = capturedLog('info');
    let finished: number | null = null;
    const slow = definePlugin({
      id: 'slow',
      prefix: '/slow',
      deps: { db: core.db },
      routes: () => [
        route({
          method: 'get',
          path: '/',
          summary: 'waits, then reads the database',
          access: 'public',
          handler: async ({ services }) => {
            // Outlasts the 1 s grace for connections (so its client is cut off), and ends
            // within the second grace the host gives running handlers.
            await new Promise((r) => setTimeout(r, 1800));
            const row = await services.db('users').count({ n: '*' }).first();
            finished = Number(row?.n);
            return { users: finished };
          },
        }),
      ],
    });
    const t = await startHost({ plugins: [slow], logger, config: { server: { shutdownGraceMs: 1000 } } });
    const pending = fetch(`${t.url}/slow/`).then(
      (r) => r.status,
      () => 'cut off',
    );
    await new Promise((r) => setTimeout(r, 100));
    await t.stop();
    // The client is cut off after the grace, but the handler's query ran on an open database.
    expect(await pending).to.equal('cut off');
    expect(finished).to.be.a('number').and.to.be.greaterThan(0);
    const failures = lines.filter((l) => l.msg === 'request failed');
    expect(failures).to.deep.equal([]);
  });

  it('drains queued database work under load before the database closes: no failures, nothing acknowledged lost', async function () {
    this.timeout(60_000);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-stop-'));
    const { lines, logger } = capturedLog('info');
    // A short grace: connections are cut while handlers are still in their transactions,
    // which must still finish on an open database.
    const t = await startHost({ dataDir, logger, config: { server: { shutdownGraceMs: 100 } } });
    let acknowledged = 0;
    const event = (i: number, j: number) => ({ id: `stop-${i}-${j}`, kernel: 'trading', task: 'price_option', duration_ms: 1 + j });
    // Writes (ingest batches, each stored in one transaction before its answer) and reads,
    // all in flight together, on SQLite's single connection.
    const load = Array.from({ length: 120 }, (_, i) => {
      const call =
        i % 3 === 0
          ? t.request('GET', '/observability/v1/query/events?limit=50')
          : t.request('POST', '/observability/v1/ingest/kernel', { body: { events: Array.from({ length: 20 }, (_, j) => event(i, j)) } }).then((r) => {
              if (r.status === 202) acknowledged += (r.body as { accepted: number }).accepted;
              return r;
            });
      // A call the stopping server never read is cut off (ECONNRESET): not acknowledged.
      return call.then(
        (r) => r.status,
        () => 'cut off',
      );
    });
    // Stopped while most of the load is still queued, once the first batch is acknowledged.
    await eventually(() => acknowledged > 0, 20_000, 'a first acknowledged batch');
    await t.stop();
    const statuses = await Promise.all(load);
    expect(statuses.filter((s) => typeof s === 'number' && s >= 500)).to.deep.equal([]);
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).to.deep.equal([]);
    // Every acknowledged event is in the database the next host opens.
    const again = await startHost({ dataDir });
    try {
      const row = await again.host.services.db('telemetry_events').where('id', 'like', 'stop-%').count({ n: '*' }).first();
      expect(acknowledged).to.be.greaterThan(0);
      // A batch stored just as its client was cut off is there too, unacknowledged.
      expect(Number(row?.n)).to.be.at.least(acknowledged);
    } finally {
      await again.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
