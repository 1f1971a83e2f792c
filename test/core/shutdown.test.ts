import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../core/logger';
import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';
import { anyRoute as route } from '../helpers/host';
import { startHost } from '../helpers/host';

describe('stopping with requests in flight', () => {
  it('lets a handler whose client was cut off finish its database work before the database closes', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
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
    const t = await startHost({ plugins: [slow], logger: createLogger('info', sink), config: { server: { shutdownGraceMs: 1000 } } });
    const pending = fetch(`${t.url}/slow/`).then(
      (r) => r.status,
      () => 'cut off',
    );
    await new Promise((r) => setTimeout(r, 100));
    await t.stop();
    // The client is cut off after the grace, but the handler's query ran on an open database.
    expect(await pending).to.equal('cut off');
    expect(finished).to.be.a('number').and.to.be.greaterThan(0);
    const failures = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request failed');
    expect(failures).to.deep.equal([]);
  });
});
