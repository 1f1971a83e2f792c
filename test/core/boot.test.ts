import { expect } from 'chai';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../../core/config';
import { BootError } from '../../core/loader';
import { createServiceRef, definePlugin, optional, provide, type PluginDef } from '../../core/plugin';
import { anyRoute as route } from '../helpers/host';
import { core } from '../../core/services';
import { startHost } from '../helpers/host';

const ping = (path = '/ping') => route({ method: 'get', path, summary: 'ping', access: 'public', handler: () => ({ ok: true }) });
const plugin = (id: string, extra: Partial<PluginDef> = {}): PluginDef => ({ ...definePlugin({ id, prefix: `/${id}`, deps: {}, routes: () => [ping()] }), ...extra });

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
    const a = definePlugin({ id: 'a', prefix: '', deps: {}, routes: () => [route({ method: 'get', path: '/x/{id}', summary: 's', access: 'public', params: z.object({ id: z.string() }), handler: () => null })] });
    const b = definePlugin({ id: 'b', prefix: '', deps: {}, routes: () => [route({ method: 'get', path: '/x/{other}/', summary: 's', access: 'public', params: z.object({ other: z.string() }), handler: () => null })] });
    expect(await refusal([a, b])).to.match(/plugin "b": route GET \/x\/\{other\}\/: GET \/x\/\{\} is already declared by plugin "a"/);
  });
  it('refuses a route that takes a core route', async () => {
    expect(await refusal([definePlugin({ id: 'a', prefix: '', deps: {}, routes: () => [ping('/openapi.json')] })])).to.match(/already declared by core/);
  });
  it('refuses an unknown service', async () => {
    expect(await refusal([plugin('a', { deps: { x: createServiceRef<number>('nope') } })])).to.match(/plugin "a": deps needs service "nope", which no plugin provides/);
  });
  it('refuses an unknown dependency and a cycle', async () => {
    expect(await refusal([plugin('a', { dependsOn: ['ghost'] })])).to.match(/depends on unknown plugin "ghost"/);
    const msg = await refusal([plugin('a', { dependsOn: ['b'] }), plugin('b', { dependsOn: ['a'] })]);
    expect(msg).to.match(/dependency cycle a -> b -> a/);
  });
  it('refuses a params schema that does not match the path', async () => {
    const p = definePlugin({
      id: 'a', prefix: '/a', deps: {},
      routes: () => [route({ method: 'get', path: '/{x}', summary: 's', access: 'public', params: z.object({ y: z.string() }), handler: () => null })],
    });
    expect(await refusal([p])).to.match(/params schema \[y\] does not match the path parameters \[x\]/);
  });
  it('refuses path parameters without a params schema', async () => {
    const p = definePlugin({ id: 'a', prefix: '/a', deps: {}, routes: () => [ping('/{x}')] });
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

describe('services between plugins', () => {
  interface Counter { next(): number; stopped: boolean }
  const counterRef = createServiceRef<Counter>('test.counter');
  const provider = (id: string, seen: string[] = []) =>
    definePlugin({
      id,
      prefix: `/${id}`,
      deps: {},
      provides: [
        provide(counterRef, {
          deps: { clock: core.clock },
          factory: () => {
            let n = 0;
            seen.push(`make ${id}`);
            return { next: () => ++n, stopped: false };
          },
          stop: (c) => {
            c.stopped = true;
            seen.push(`stop service ${id}`);
          },
        }),
      ],
      routes: () => [],
    });
  const consumer = (id: string, seen: string[] = []) =>
    definePlugin({
      id,
      prefix: `/${id}`,
      deps: { counter: counterRef },
      start: () => void seen.push(`start ${id}`),
      stop: () => void seen.push(`stop ${id}`),
      routes: (route) => [route({ method: 'get', path: '/n', summary: 'next', access: 'public', handler: ({ services }) => ({ n: services.counter.next() }) })],
    });

  it('gives a consumer the service another plugin provides, started first and stopped last', async () => {
    const seen: string[] = [];
    // Listed consumer first: the order comes from the dependency, not from the list.
    const t = await startHost({ plugins: [consumer('user', seen), provider('maker', seen)] });
    expect((await t.request('GET', '/user/n')).body).to.deep.equal({ n: 1 });
    expect((await t.request('GET', '/user/n')).body).to.deep.equal({ n: 2 });
    const svc = t.host.service(counterRef);
    await t.stop();
    expect(seen).to.deep.equal(['make maker', 'start user', 'stop user', 'stop service maker']);
    expect(svc.stopped).to.equal(true);
  });
  it('refuses a missing provider, naming the plugin and the service', async () => {
    expect(await refusal([consumer('user')])).to.match(/plugin "user": deps needs service "test.counter", which no plugin provides/);
  });
  it('refuses two providers of one service, naming both', async () => {
    expect(await refusal([provider('one'), provider('two')])).to.match(/plugin "two": provides service "test.counter", which plugin "one" provides too/);
  });
  it('refuses a plugin that provides a core service', async () => {
    const p = definePlugin({ id: 'x', prefix: '/x', deps: {}, provides: [provide(core.db, { deps: {}, factory: () => null as never })], routes: () => [] });
    expect(await refusal([p])).to.match(/plugin "x": provides service "db", which core provides/);
  });
  it('refuses a cycle between plugins through their services', async () => {
    const aRef = createServiceRef<number>('test.a');
    const bRef = createServiceRef<number>('test.b');
    const a = definePlugin({ id: 'a', prefix: '/a', deps: { b: bRef }, provides: [provide(aRef, { deps: {}, factory: () => 1 })], routes: () => [] });
    const b = definePlugin({ id: 'b', prefix: '/b', deps: {}, provides: [provide(bRef, { deps: { a: aRef }, factory: () => 2 })], routes: () => [] });
    expect(await refusal([a, b])).to.match(/dependency cycle a -> b -> a/);
  });
  it('resolves an optional dependency to null without a provider, and starts the provider first when there is one', async () => {
    const seen: string[] = [];
    const maybe = definePlugin({
      id: 'maybe', prefix: '/maybe', deps: { counter: optional(counterRef) },
      start: ({ counter }) => void seen.push(`start maybe with ${counter ? 'a counter' : 'none'}`),
      routes: (route) => [route({ method: 'get', path: '/', summary: 'n', access: 'public', handler: ({ services }) => ({ n: services.counter?.next() ?? null }) })],
    });
    const alone = await startHost({ plugins: [maybe] });
    expect((await alone.request('GET', '/maybe')).body).to.deep.equal({ n: null });
    await alone.stop();
    const both = await startHost({ plugins: [maybe, provider('maker', seen)] });
    expect((await both.request('GET', '/maybe')).body).to.deep.equal({ n: 1 });
    await both.stop();
    expect(seen).to.deep.equal(['start maybe with none', 'make maker', 'start maybe with a counter', 'stop service maker']);
  });
  it('lets a test replace a service (the clock) for every plugin', async () => {
    const fixed = { now: () => new Date('2030-01-02T03:04:05Z') };
    const p = definePlugin({
      id: 'when', prefix: '/when', deps: { clock: core.clock },
      routes: (route) => [route({ method: 'get', path: '/', summary: 'now', access: 'public', handler: ({ services }) => ({ now: services.clock.now().toISOString() }) })],
    });
    const t = await startHost({ plugins: [p], overrides: [[core.clock, fixed]] });
    try {
      expect((await t.request('GET', '/when')).body).to.deep.equal({ now: '2030-01-02T03:04:05.000Z' });
    } finally {
      await t.stop();
    }
  });
  it('names the plugin when a service factory fails', async () => {
    const p = definePlugin({ id: 'bad', prefix: '/bad', deps: {}, provides: [provide(counterRef, { deps: {}, factory: () => { throw new Error('no disk'); } })], routes: () => [] });
    expect(await refusal([p])).to.match(/plugin "bad": service "test.counter": factory failed: no disk/);
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
