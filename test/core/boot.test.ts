import { expect } from 'chai';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../../core/config';
import { BootError } from '../../core/loader';
import { definePlugin, route, type PluginDef } from '../../core/plugin';
import type { ServiceName } from '../../core/services';
import { startHost } from '../helpers/host';

const ping = (path = '/ping') => route({ method: 'get', path, summary: 'ping', access: 'public', handler: () => ({ ok: true }) });
const plugin = (id: string, extra: Partial<PluginDef> = {}): PluginDef =>
  definePlugin({ id, prefix: `/${id}`, services: [], routes: [ping()], ...extra });

async function refusal(plugins: PluginDef[]): Promise<string> {
  try {
    const t = await startHost({ plugins });
    await t.stop();
  } catch (err) {
    expect(err).to.be.instanceOf(BootError);
    return (err as Error).message;
  }
  throw new Error('the host started');
}

describe('boot checks', () => {
  it('refuses a bad plugin id', async () => {
    expect(await refusal([plugin('Bad_Id')])).to.match(/plugin "Bad_Id": id must be/);
  });
  it('refuses two plugins with one id', async () => {
    expect(await refusal([plugin('a'), { ...plugin('a'), prefix: '/other' }])).to.match(/plugin "a": id is used by two/);
  });
  it('refuses the same method and path in two plugins, whatever the parameter names', async () => {
    const a = definePlugin({ id: 'a', prefix: '', services: [], routes: [route({ method: 'get', path: '/x/{id}', summary: 's', access: 'public', params: z.object({ id: z.string() }), handler: () => null })] });
    const b = definePlugin({ id: 'b', prefix: '', services: [], routes: [route({ method: 'get', path: '/x/{other}/', summary: 's', access: 'public', params: z.object({ other: z.string() }), handler: () => null })] });
    expect(await refusal([a, b])).to.match(/plugin "b": route GET \/x\/\{other\}\/: GET \/x\/\{\} is already declared by plugin "a"/);
  });
  it('refuses a route that takes a core route', async () => {
    expect(await refusal([definePlugin({ id: 'a', prefix: '', services: [], routes: [ping('/openapi.json')] })])).to.match(/already declared by core/);
  });
  it('refuses an unknown service', async () => {
    expect(await refusal([plugin('a', { services: ['nope' as ServiceName] })])).to.match(/plugin "a": needs unknown service "nope"/);
  });
  it('refuses an unknown dependency and a cycle', async () => {
    expect(await refusal([plugin('a', { dependsOn: ['ghost'] })])).to.match(/depends on unknown plugin "ghost"/);
    const msg = await refusal([plugin('a', { dependsOn: ['b'] }), plugin('b', { dependsOn: ['a'] })]);
    expect(msg).to.match(/dependency cycle a -> b -> a/);
  });
  it('refuses a params schema that does not match the path', async () => {
    const p = definePlugin({
      id: 'a', prefix: '/a', services: [],
      routes: [route({ method: 'get', path: '/{x}', summary: 's', access: 'public', params: z.object({ y: z.string() }), handler: () => null })],
    });
    expect(await refusal([p])).to.match(/params schema \[y\] does not match the path parameters \[x\]/);
  });
  it('refuses path parameters without a params schema', async () => {
    const p = definePlugin({ id: 'a', prefix: '/a', services: [], routes: [ping('/{x}')] });
    expect(await refusal([p])).to.match(/params schema \[\] does not match the path parameters \[x\]/);
  });
  it('refuses a route without an access rule or a bad method', async () => {
    const p = plugin('a', { routes: [{ ...ping(), access: undefined as never }] });
    expect(await refusal([p])).to.match(/does not say who may call it/);
    expect(await refusal([plugin('a', { routes: [{ ...ping(), method: 'trace' as never }] })])).to.match(/unknown method/);
  });
  it('refuses a start hook that fails or takes too long', async () => {
    expect(await refusal([plugin('a', { start: () => { throw new Error('no disk'); } })])).to.match(/plugin "a": start failed: no disk/);
    const slow = plugin('slow', { start: () => new Promise((r) => setTimeout(r, 5000)) });
    try {
      const t = await startHost({ plugins: [slow], config: { server: { pluginStartTimeoutMs: 100 } } });
      await t.stop();
      expect.fail('started');
    } catch (err) {
      expect((err as Error).message).to.match(/plugin "slow": start did not finish within 100 ms/);
    }
  });

  it('starts plugins in dependency order and stops them in reverse', async () => {
    const seen: string[] = [];
    const mk = (id: string, deps: string[] = []) =>
      plugin(id, { dependsOn: deps, start: () => void seen.push(`start ${id}`), stop: () => void seen.push(`stop ${id}`) });
    const t = await startHost({ plugins: [mk('c', ['b']), mk('a'), mk('b', ['a'])] });
    await t.stop();
    expect(seen).to.deep.equal(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('lets in-flight requests finish at stop, then refuses new ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = plugin('slow', {
      routes: [route({ method: 'get', path: '/wait', summary: 'waits', access: 'public', handler: async () => { await gate; return { done: true }; } })],
    });
    const t = await startHost({ plugins: [slow] });
    const inflight = t.request('GET', '/slow/wait');
    await new Promise((r) => setTimeout(r, 100));
    const stopping = t.stop();
    setTimeout(release, 200);
    const r = await inflight;
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({ done: true });
    await stopping;
    let refused = false;
    await fetch(`${t.url}/slow/wait`).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });
});

describe('configuration', () => {
  it('takes defaults, then the environment', () => {
    const c = loadConfig({ PORT: '9001', LOG_LEVEL: 'warn', DATA_DIR: '/tmp/x' });
    expect(c.server.port).to.equal(9001);
    expect(c.log.level).to.equal('warn');
    expect(c.dataDir).to.equal('/tmp/x');
    expect(c.server.bodyLimit).to.equal(1024 * 1024);
  });
  it('names the key and what was expected when a value is wrong', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(ConfigError, /PORT: expected a whole number/);
    expect(() => loadConfig({ PORT: '70000' })).to.throw(ConfigError, /"server.port"/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).to.throw(ConfigError, /"database.url": a postgres:\/\/ URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).to.throw(ConfigError, /"log.level"/);
    expect(() => loadConfig({ JWT_SECRET: 'short' })).to.throw(ConfigError, /"auth.jwtSecret": at least 32/);
  });
  it('reads a JSON config file and reports a broken one', () => {
    const fs = require('node:fs') as typeof import('node:fs');
    const file = `/tmp/pc-config-${process.pid}.json`;
    fs.writeFileSync(file, JSON.stringify({ server: { bodyLimit: 4096 } }));
    expect(loadConfig({ CONFIG_FILE: file }).server.bodyLimit).to.equal(4096);
    fs.writeFileSync(file, '{oops');
    expect(() => loadConfig({ CONFIG_FILE: file })).to.throw(ConfigError, /not valid JSON/);
    expect(() => loadConfig({ CONFIG_FILE: '/nonexistent/file.json' })).to.throw(ConfigError, /cannot read/);
    fs.unlinkSync(file);
  });
});
