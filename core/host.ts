import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { WebSocketServer } from 'ws';
import { ActionLog, actionMigrations } from './actions';
import { AuthService, loadSecret, VERIFIED_CACHE_SIZE } from './auth/service';
import { RECENT_MAX } from './http/routes';
import { coreMigrations } from './auth/store';
import { accountsRef } from './contracts/accounts';
import { Mailer, mailMigrations } from './mail';
import { Revocations } from './auth/revocations';
import { RateLimiter } from './limits';
import type { Config } from './config';
import { migrate, openDatabase, type Db } from './db';
import { EventBus } from './events';
import { HealthRegistry, timed } from './health';
import { buildApp } from './http/app';
import { Pipeline } from './http/pipeline';
import { attachSockets } from './http/sockets';
import { Lifecycle } from './lifecycle';
import { BootError, checkPlugins, discoverPlugins, providerOrder } from './loader';
import { createLogger, type Logger } from './logger';
import { metaPlugin } from './meta';
import type { Deps, PluginDef, ServiceRef } from './plugin';
import { openRedis, type Redis } from './redis';
import { Hub } from './hub/hub';
import { ControlBus } from './cluster/bus';
import { TaskForwarder } from './cluster/forward';
import { kernelHandlers } from './cluster/kernel-actions';
import { runOwned } from './cluster/node-actions';
import { hostStats } from './cluster/stats';
import { clusterHealth } from './cluster/health';
import { ClusterRegistry } from './cluster/registry';
import { Mesh } from './mesh/mesh';
import { meshMigrations } from './mesh/store';
import { createTelemetry } from './telemetry';
import { VERSION } from './meta';
import { leaseMigrations, Leases } from './leases';
import { SERVICE_NAMES, systemClock, type Clock, type Services } from './services';

export interface HostOptions {
  config: Config;
  /** Plugins to load instead of discovering them (tests). */
  plugins?: PluginDef[];
  logger?: Logger;
  /** Services to use instead of the ones core or a plugin would make (tests: a clock, a mailer). */
  overrides?: Array<[ServiceRef<any>, unknown]>;
}

export interface StartResult {
  port: number;
  /** Set on the very first start only: the admin account that was created. */
  admin: { email: string; password: string } | null;
}

const DEFAULT_PLUGIN_DIR = path.resolve(__dirname, '..', 'plugins');

function withTimeout<T>(p: Promise<T> | T, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    Promise.resolve(p),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BootError(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The host process: plugins, HTTP server, sockets, storage and core services. */
export class Host {
  readonly config: Config;
  readonly log: Logger;
  readonly lifecycle = new Lifecycle();
  services!: Services;
  plugins: PluginDef[] = [];
  /** Every service by id: core's and the ones plugins provide. */
  private readonly registry = new Map<string, unknown>();
  /** Each plugin's resolved deps: what its handlers get as `services`. */
  private readonly pluginDeps = new Map<string, Record<string, unknown>>();
  /** Plugin-provided services that started, in start order (stopped in reverse). */
  private readonly startedServices: Array<{ plugin: string; stop: () => Promise<void> | void }> = [];
  private server?: http.Server;
  private wss?: WebSocketServer;
  private stopping?: Promise<void>;
  /** Functions core areas run at stop, after plugins stop and before the database closes. */
  private readonly closers: Array<() => Promise<void> | void> = [];

  constructor(private readonly options: HostOptions) {
    this.config = options.config;
    this.log = options.logger ?? createLogger(this.config.log.level);
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async start(): Promise<StartResult> {
    this.lifecycle.state = 'starting';
    const found = this.options.plugins ?? discoverPlugins(this.config.plugins.dir ?? DEFAULT_PLUGIN_DIR);
    const enabled = found.filter((p) => !this.config.plugins.disabled.includes(p.id));
    const meta = metaPlugin(() => this.plugins);
    // Definitions are checked before anything is opened, so a bad plugin costs nothing.
    this.plugins = checkPlugins([meta, ...enabled], SERVICE_NAMES).ordered;

    const db = await openDatabase(this.config);
    this.closers.push(() => db.destroy());
    await migrate(db, [
      { owner: 'core', migrations: [...coreMigrations, ...mailMigrations, ...actionMigrations, ...meshMigrations, ...leaseMigrations] },
      ...this.plugins.map((p) => ({ owner: p.id, migrations: p.migrations ?? [] })),
    ]);
    const redis = openRedis(this.config);
    if (redis) {
      // Connection faults show in health and in the callers' errors; log them once each.
      let lastError = '';
      redis.on('error', (err: Error) => {
        if (err.message !== lastError) this.log.warn({ err: err.message }, 'redis connection error');
        lastError = err.message;
      });
      redis.on('ready', () => (lastError = ''));
      this.closers.unshift(() => void redis.quit().catch(() => redis.disconnect()));
    }
    const health = new HealthRegistry();
    const events = new EventBus();
    const auth = new AuthService(this.config, db, loadSecret(this.config));
    const pipeline = new Pipeline();
    const telemetry = createTelemetry(this.config, pipeline, VERSION);
    this.closers.unshift(() => telemetry.sdk.shutdown());
    const { revocations, limits, mailer } = await this.startAuth(db, auth, pipeline, events);
    const actions = new ActionLog(db, events);
    const mesh = new Mesh(this.config, db, events, actions, this.log);
    this.onStop(() => mesh.stop());
    await mesh.start().catch((err: Error) => {
      throw new BootError(`kernel mesh: ${err.message}`);
    });
    await this.joinCluster(redis, mesh, db, events, limits);
    const hub = new Hub(this.config.hub, events, redis, this.log, () => ({ overview: mesh.overview(), kernels: mesh.kernels() }), (c) => auth.stillValid(c));
    this.onStop(() => hub.stop());
    await hub.start();
    // The mesh reports to telemetry: every task, and live node and breaker states when metrics are read.
    mesh.taskObservers.push((t, ms) => telemetry.kernels.taskFinished(t, ms));
    telemetry.kernels.addSource(() => {
      const kernels = mesh.kernels();
      return {
        nodes: kernels.flatMap((k) =>
          k.nodes.map((n) => ({
            kernel: k.id,
            node: n.id,
            state: n.state,
            queueDepth: n.queued,
            inFlight: n.in_flight,
            threads: n.live_threads.map((t) => ({ thread: String(t.thread_id), loopDelayP99Ms: t.loop_delay_p99_ms, heapUsedBytes: t.heap_used_bytes, heapLimitBytes: t.heap_limit_bytes })),
          })),
        ),
        breakers: kernels.map((k) => ({ kernel: k.id, state: k.breaker.state })),
      };
    });
    this.services = {
      config: this.config,
      db,
      log: this.log,
      events,
      auth,
      health,
      pipeline,
      lifecycle: this.lifecycle,
      redis,
      actions,
      limits,
      revocations,
      mesh,
      hub,
      telemetry,
      clock: systemClock,
      mailer,
      // The clock as plugins see it (a test's override included).
      leases: new Leases(db, { now: () => ((this.registry.get('clock') as Clock | undefined) ?? systemClock).now() }),
    };
    this.registerCoreHealth();
    await this.startPlugins();
    // The auth plugin makes the first admin when it starts on an empty database.
    const admin = this.registry.has(accountsRef.id) ? this.service(accountsRef).firstAdmin : null;

    const depsOf = (pluginId: string | undefined) => this.pluginDeps.get(pluginId ?? '') ?? {};
    const app = buildApp(this.services, this.services.pipeline, this.plugins.flatMap((p) => p.routes), depsOf);
    this.lifecycle.app = app;
    const caches = this.services.telemetry.caches;
    caches.track({ name: 'auth.verified_tokens', entries: () => this.services.auth.rememberedTokens, limit: VERIFIED_CACHE_SIZE });
    caches.track({ name: 'http.route_lookups', entries: () => app.routeCache(), limit: RECENT_MAX });
    caches.track({ name: 'limits.budgets', entries: () => this.services.limits.sizes.buckets, limit: null });
    caches.track({ name: 'limits.tenant_plans', entries: () => this.services.limits.sizes.plans, limit: null });
    this.server = http.createServer({ requestTimeout: 60_000, headersTimeout: 20_000, keepAliveTimeout: 5_000, IncomingMessage: app.IncomingMessage, ServerResponse: app.ServerResponse }, app);
    this.wss = attachSockets(this.server, this.plugins.flatMap((p) => p.sockets), this.services, depsOf);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.config.server.port, this.config.server.host, () => resolve());
    });
    this.lifecycle.httpPort = this.port;
    this.lifecycle.state = 'running';
    this.log.info({ port: this.port, plugins: this.plugins.map((p) => p.id) }, 'host started');
    return { port: this.port, admin };
  }

  /** Revocation (checked on every token), mail and rate limits. */
  private async startAuth(db: Db, auth: AuthService, pipeline: Pipeline, events: EventBus) {
    const revocations = new Revocations(db, this.config.auth.revocationSyncMs);
    await revocations.start();
    this.onStop(() => revocations.stop());
    auth.addClaimsCheck(revocations.check);
    const planOf = async (id: string) => {
      const row: { plan?: string } | undefined = await db('tenants').where({ id }).first('plan');
      return row?.plan ?? null;
    };
    const limits = new RateLimiter(this.config, planOf, this.log);
    this.onStop(() => limits.close());
    pipeline.before.push(limits.hook);
    limits.onRefuse = (r) => events.publish('security.rate_limited', r);
    if (!(await limits.ready(2000))) this.log.warn('rate limits: Redis not reachable yet; requests are let through until it is');
    const mailer = new Mailer(db, this.config, this.log);
    this.onStop(() => mailer.close());
    return { revocations, limits, mailer };
  }

  /** The service with this reference (core's or a plugin's), once started. */
  service<T>(ref: ServiceRef<T>): T {
    if (!this.registry.has(ref.id)) throw new Error(`service "${ref.id}" is not started`);
    return this.registry.get(ref.id) as T;
  }

  private resolve(deps: Deps): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, ref] of Object.entries(deps)) out[name] = ref.optional && !this.registry.has(ref.id) ? null : this.service(ref);
    return out;
  }

  /**
   * In dependency order: each plugin's provided services (factory, then start), then the
   * plugin's own start hook with its resolved deps. Handlers get the same resolved deps.
   */
  private async startPlugins(): Promise<void> {
    const overrides = new Map((this.options.overrides ?? []).map(([ref, v]) => [ref.id, v]));
    for (const [name, svc] of Object.entries(this.services)) this.registry.set(name, overrides.has(name) ? overrides.get(name) : svc);
    const timeout = this.config.server.pluginStartTimeoutMs;
    const boot = (what: string, fn: () => unknown) =>
      withTimeout(Promise.resolve().then(fn), timeout, what).catch((err: Error) => {
        throw err instanceof BootError ? err : new BootError(`${what} failed: ${err.message}`);
      });
    for (const p of this.plugins) {
      for (const provider of providerOrder(p)) {
        const what = `plugin "${p.id}": service "${provider.ref.id}"`;
        let instance: unknown = overrides.get(provider.ref.id);
        if (!overrides.has(provider.ref.id)) {
          instance = await boot(`${what}: factory`, () => provider.factory(this.resolve(provider.deps)));
          if (provider.start) await boot(`${what}: start`, () => provider.start!(instance));
          if (provider.stop) this.startedServices.push({ plugin: p.id, stop: () => provider.stop!(instance) });
        }
        this.registry.set(provider.ref.id, instance);
      }
      // Kept per host, not on the route objects: hosts in one process share plugin modules.
      const deps = this.resolve(p.deps);
      this.pluginDeps.set(p.id, deps);
      if (p.start) await boot(`plugin "${p.id}": start`, () => p.start!(deps));
      this.lifecycle.startedPlugins.push(p.id);
    }
  }

  private registerCoreHealth(): void {
    const { db, redis, health } = this.services;
    health.register('database', async () => {
      const { ms } = await timed(() => db.raw('select 1'));
      return { status: 'healthy', detail: { client: db.client.config.client, latency_ms: ms } };
    });
    health.register('redis', async () => {
      if (!redis) return { status: 'disabled', detail: { reason: 'REDIS_URL is not set' } };
      try {
        const { ms } = await timed(() => redis.ping());
        return { status: 'healthy', detail: { latency_ms: ms } };
      } catch (err) {
        return { status: 'unhealthy', detail: { error: (err as Error).message } };
      }
    });
    health.register('kernels', () => this.services.mesh.probe());
    if (this.services.mesh.hostId) health.register('cluster', async () => clusterHealth(this.services.mesh));
  }

  /** With cluster.hostId and REDIS_URL, this host registers its nodes and sees the others' (docs/scale-out.md). */
  private async joinCluster(redis: Redis | null, mesh: Mesh, db: Db, events: EventBus, limits: RateLimiter): Promise<void> {
    const { cluster } = this.config;
    if (!cluster.hostId) return;
    if (!redis) throw new BootError('cluster.hostId (CLUSTER_HOST_ID) needs REDIS_URL: the hosts of a cluster share Redis');
    const registry = new ClusterRegistry(redis, { hostId: cluster.hostId, url: cluster.url ?? null, leaseMs: cluster.leaseMs, prefix: cluster.prefix }, () => ({ nodes: mesh.localNodes(), breakers: mesh.breakers() }), db, events, this.log);
    await registry.start().catch((err: Error) => {
      throw new BootError(`cluster registry: ${err.message}`);
    });
    mesh.remoteNodes = () => registry.remoteNodes();
    const bus = new ControlBus(redis, cluster.prefix, cluster.hostId, cluster.controlTimeoutMs, (req) => runOwned(mesh, req), this.log);
    await bus.start().catch((err: Error) => {
      throw new BootError(`cluster control bus: ${err.message}`);
    });
    for (const [action, fn] of Object.entries(kernelHandlers(mesh))) bus.handle(action, fn);
    bus.handle('mesh.stats', async () => ({ status: 200, body: hostStats(mesh) }));
    mesh.bus = bus;
    this.onStop(() => bus.stop());
    mesh.hosts = () => registry.hostList().map((h) => ({ ...h, this_host: h.host_id === cluster.hostId }));
    mesh.forwarder = new TaskForwarder(cluster.hostId, loadSecret(this.config), () => registry.hostList(), () => registry.remoteNodes(), mesh.cfg.taskTimeoutMs + 5000);
    // A task a peer forwarded took the tenant's budget there already.
    const forwarder = mesh.forwarder;
    limits.exempt = (req) => forwarder.fromPeer(req);
    this.onStop(() => forwarder.close());
    this.onStop(() => registry.stop());
  }

  /** Adds a function to run at stop (core areas close their resources with it). */
  onStop(fn: () => Promise<void> | void): void {
    this.closers.unshift(fn);
  }

  /**
   * Stops accepting connections, lets in-flight requests finish (bounded by
   * shutdownGraceMs), stops plugins in reverse order and closes the database.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.lifecycle.state = 'stopping';
    const server = this.server;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const client of this.wss?.clients ?? []) client.close(1001, 'server shutting down');
      const grace = new Promise<void>((resolve) => setTimeout(resolve, this.config.server.shutdownGraceMs).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
      for (const client of this.wss?.clients ?? []) client.terminate();
      // Handlers whose clients were cut off still finish their work before the database
      // and the mesh they use are closed under them.
      if (!(await this.services.pipeline.settled(this.config.server.shutdownGraceMs))) {
        this.log.warn('requests still running after the shutdown grace; stopping anyway');
      }
    }
    for (const p of [...this.plugins].reverse()) {
      const steps: Array<[string, () => unknown]> = [];
      if (p.stop && this.lifecycle.startedPlugins.includes(p.id)) steps.push([`plugin "${p.id}": stop`, () => p.stop!(this.resolve(p.deps))]);
      for (const s of this.startedServices.filter((x) => x.plugin === p.id).reverse()) steps.push([`plugin "${p.id}": service stop`, s.stop]);
      for (const [what, fn] of steps) {
        try {
          await withTimeout(Promise.resolve().then(fn), this.config.server.pluginStartTimeoutMs, what);
        } catch (err) {
          this.log.error({ err, plugin: p.id }, 'plugin stop failed');
        }
      }
    }
    for (const close of this.closers) {
      try {
        await close();
      } catch (err) {
        this.log.error({ err }, 'closing a core service failed');
      }
    }
    this.lifecycle.state = 'stopped';
    this.log.info('host stopped');
  }
}
