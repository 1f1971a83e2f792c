import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { eventually } from '../helpers/eventually';

const MAIN = path.resolve(__dirname, '..', '..', 'core', 'main.js');

function launch(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-proc-'));
  const proc = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += String(d)));
  proc.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  // 30 s: a loaded CI machine starts the whole service (every plugin and kernel) slowly.
  const waitFor = (text: string) => eventually(() => out.includes(text), 30_000, `"${text}" in the output`);
  return { proc, exited, waitFor, output: () => out, dataDir };
}

describe('the service process', function () {
  this.timeout(90_000);
  it('prints the first admin once, then exits cleanly on SIGTERM', async () => {
    const first = launch({ ADMIN_EMAIL: 'Root@Example.com' });
    await first.waitFor('listening on');
    expect(first.output()).to.match(/e-mail: {3}root@example\.com\n {4}password: \S{20,}/);
    first.proc.kill('SIGTERM');
    expect(await first.exited).to.equal(0);
    // Same data directory: no new admin, nothing printed about one.
    const again = launch({ DATA_DIR: first.dataDir });
    await again.waitFor('listening on');
    expect(again.output()).not.to.match(/password/);
    again.proc.kill('SIGINT');
    expect(await again.exited).to.equal(0);
  });

  it('refuses to start on a wrong config value, naming the key', async () => {
    const bad = launch({ PORT: 'http' });
    expect(await bad.exited).to.equal(2);
    expect(bad.output()).to.match(/PORT: expected a whole number/);
    const badUrl = launch({ DATABASE_URL: 'mysql://nope' });
    expect(await badUrl.exited).to.equal(2);
    expect(badUrl.output()).to.match(/"database.url": a postgres:\/\/ URL/);
  });

  it('refuses to start when the port is taken, and says why', async () => {
    const first = launch({});
    await first.waitFor('listening on');
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(first.output())![1];
    const second = launch({ PORT: port });
    expect(await second.exited).to.equal(3);
    expect(second.output()).to.match(/refusing to start: .*EADDRINUSE/);
    first.proc.kill('SIGTERM');
    await first.exited;
  });
});
