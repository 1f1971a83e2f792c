import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** `docker compose` (the plugin) or `docker-compose` (test/tools/services.sh installs it), whichever runs. */
function compose(): string[] | null {
  for (const cmd of [['docker', 'compose'], ['docker-compose']]) {
    const r = spawnSync(cmd[0]!, [...cmd.slice(1), 'version'], { encoding: 'utf8' });
    if (r.status === 0) return cmd;
  }
  return null;
}

// docker-compose.yml (docs/scale-out.md) is kept valid: compose itself reads it.
describe('docker-compose.yml: three hosts on PostgreSQL and Redis behind a proxy', function () {
  this.timeout(60_000);
  const cmd = compose();
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(cmd![0]!, [...cmd!.slice(1), '-f', path.join(ROOT, 'docker-compose.yml'), ...args], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });

  before(function () {
    if (!cmd) this.skip(); // no docker compose on this machine
  });

  it('is valid, and names every service with one secret and a host id each', () => {
    const env = { JWT_SECRET: 'a-secret-of-at-least-thirty-two-characters', ADMIN_PASSWORD: 'first-admin-password' };
    const check = run(['config', '-q'], env);
    expect(check.status, check.stderr).to.equal(0);
    const services = run(['config', '--services'], env).stdout.trim().split('\n').sort();
    expect(services).to.deep.equal(['host-a', 'host-b', 'host-c', 'postgres', 'proxy', 'redis']);
    const full = run(['config'], env).stdout;
    for (const id of ['a', 'b', 'c']) expect(full).to.match(new RegExp(`CLUSTER_HOST_ID: ${id}\\n`));
    expect(full.match(/JWT_SECRET: a-secret-of-at-least-thirty-two-characters/g)).to.have.length(3);
  });

  it('refuses to start without the shared secret', () => {
    const r = run(['config', '-q'], { ADMIN_PASSWORD: 'x' });
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.contain('set JWT_SECRET');
  });
});
