import { z } from 'zod';

// The whole configuration, with its defaults. Every key can come from the optional JSON
// config file (CONFIG_FILE); the environment variables in core/config.ts override both.
// Areas of the service add their own section here.
/** One domain's objective: availability (success ratio), p99 latency target, rolling window. */
const sloTarget = z.object({
  availability: z.number().gt(0).lt(1).default(0.99),
  latencyP99Ms: z.number().int().positive().default(1_000),
  windowSeconds: z.number().int().min(60).default(30 * 86400),
});

/** An operator's price of an hour of compute, as decimal strings. */
const computePrice = z.object({
  cpuHour: z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, 'a decimal amount'),
  gpuHour: z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, 'a decimal amount').default('0'),
  currency: z.string().regex(/^[A-Z]{3}$/).default('USD'),
});
/** A metered price or cost: `amount` minor units per `per` units. */
const unitPrice = z.object({ amount: z.number().int().min(0), per: z.number().int().min(1) });

export const configSchema = z.object({
  env: z.enum(['development', 'test', 'production']).default('development'),
  server: z
    .object({
      host: z.string().min(1).default('0.0.0.0'),
      port: z.number().int().min(0).max(65535).default(8000),
      /** Largest accepted request body, in bytes. */
      bodyLimit: z.number().int().positive().default(1024 * 1024),
      /** How long in-flight requests may take to finish at shutdown. */
      shutdownGraceMs: z.number().int().positive().default(10_000),
      /** Time a plugin's start hook may take before boot fails. */
      pluginStartTimeoutMs: z.number().int().positive().default(15_000),
      /** Check handler results against the declared response schema (on in tests). */
      validateResponses: z.boolean().default(false),
    })
    .prefault({}),
  dataDir: z.string().min(1).default('./data'),
  database: z
    .object({
      /** postgres://... selects PostgreSQL; unset means SQLite under dataDir. */
      url: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL').optional(),
      /** PostgreSQL schema to use (tests give each host its own). */
      schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
      sqliteFile: z.string().min(1).default('platform.sqlite'),
      /** SQLite: read-only connections beside the one writer for plain reads (0: every query on the writer; docs/configuration.md). */
      readConnections: z.number().int().min(0).max(32).default(4),
      /** PostgreSQL: the most connections the pool opens. */
      poolSize: z.number().int().min(1).max(200).default(10),
    })
    .prefault({}),
  redis: z
    .object({ url: z.string().regex(/^rediss?:\/\//, 'a redis:// URL').optional() })
    .prefault({}),
  /** Scale-out (docs/scale-out.md): set hostId, with REDIS_URL, to join a cluster of hosts. */
  cluster: z
    .object({
      /** This host's name in the cluster; also part of its node ids (`<domain>-<hostId>-<n>`). */
      hostId: z.string().regex(/^[a-z][a-z0-9]{0,15}$/, 'a host id: a lowercase letter, then letters or digits (at most 16)').optional(),
      /** The URL other hosts reach this one at (advertised in the registry). */
      url: z.string().regex(/^https?:\/\//, 'an http:// URL').optional(),
      /** A host whose last heartbeat is older than this is lost; heartbeats go every third of it. */
      leaseMs: z.number().int().min(300).default(3000),
      /** Prefix of the registry's keys in Redis (tests give each run its own). */
      prefix: z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/).default('pc-cluster'),
      /** How long a node action sent to the host that runs the node waits for its answer (504 after). */
      controlTimeoutMs: z.number().int().min(100).max(120_000).default(5000),
    })
    .prefault({}),
  log: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  auth: z
    .object({
      /** HMAC secret for tokens; when unset one is generated and kept in dataDir. */
      jwtSecret: z.string().min(32, 'at least 32 characters').optional(),
      issuer: z.string().default('platform-control'),
      audience: z.string().default('platform-control-api'),
      tokenTtlSeconds: z.number().int().positive().default(24 * 3600),
      adminEmail: z.string().email().default('admin@example.com'),
      adminPassword: z.string().min(12, 'at least 12 characters').optional(),
      /** Refresh tokens live this long; each use rotates them. */
      refreshTtlSeconds: z.number().int().positive().default(14 * 24 * 3600),
      /** Password reset tokens live this long. */
      resetTtlSeconds: z.number().int().positive().default(3600),
      /** Failed logins tolerated per account and per client address within windowSeconds. */
      loginThrottle: z
        .object({
          accountFailures: z.number().int().positive().default(5),
          addressFailures: z.number().int().positive().default(20),
          windowSeconds: z.number().int().positive().default(900),
        })
        .prefault({}),
      /** How often a host reloads revocations other hosts wrote (shared PostgreSQL). */
      revocationSyncMs: z.number().int().positive().default(2000),
    })
    .prefault({}),
  /** Billing plans: the per-tenant request budget and the features each enables. */
  plans: z.preprocess(
    (v) => mergePlans(v),
    z.record(
      z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'lowercase plan names'),
      z.object({
        requestsPerMinute: z.number().int().positive(),
        features: z.array(z.string().min(1)).default([]),
      }),
    ),
  ),
  limits: z
    .object({
      /** Length of one rate-limit window. */
      windowSeconds: z.number().int().positive().default(60),
      /** Budget of one client address on unauthenticated auth routes (login, register, reset, verify). */
      clientAddressPerWindow: z.number().int().positive().default(30),
      /** Other hosts see a plan change within this time (this host at once). */
      planCacheMs: z.number().int().nonnegative().default(5000),
      /** Prefix of bottleneck limiter ids in Redis (tests give each run its own). */
      redisPrefix: z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/).default('pc-limits'),
    })
    .prefault({}),
  mail: z
    .object({
      /** smtp://user:pass@host:port (or smtps://); unset keeps mail in the outbox table only. */
      smtpUrl: z.string().regex(/^smtps?:\/\//, 'an smtp:// URL').optional(),
      from: z.string().min(3).default('platform-control <no-reply@localhost>'),
      /** Link put in reset mails; `{token}` is replaced by the token. */
      resetUrl: z.string().optional(),
    })
    .prefault({}),
  /** Service-level objectives per domain; the SLO endpoints measure task outcomes against them. */
  slo: z
    .object({
      /** Targets of a domain that `domains` does not name. */
      default: sloTarget.prefault({}),
      domains: z.record(z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a domain name'), sloTarget).default({
        trading: { availability: 0.999, latencyP99Ms: 250, windowSeconds: 30 * 86400 },
        llm: { availability: 0.99, latencyP99Ms: 10_000, windowSeconds: 30 * 86400 },
        analytics: { availability: 0.995, latencyP99Ms: 2_000, windowSeconds: 30 * 86400 },
      }),
    })
    .prefault({}),
  /** Webhook deliveries of alert subscriptions. */
  alerts: z
    .object({
      /** Attempts per event and subscription, the first included. */
      maxAttempts: z.number().int().min(1).max(20).default(5),
      /** Wait before the 2nd attempt; doubles each time, capped by retryMaxMs. */
      retryBaseMs: z.number().int().min(1).default(1_000),
      retryMaxMs: z.number().int().min(1).default(60_000),
      /** Time one attempt may take (connect, send, answer). */
      timeoutMs: z.number().int().positive().default(5_000),
      /** Deliveries in flight at once; the rest wait in the queue. */
      concurrency: z.number().int().min(1).max(100).default(4),
      /** Deliveries waiting at most; past it new ones are dropped and recorded as dropped. */
      queueLimit: z.number().int().min(1).default(10_000),
    })
    .prefault({}),
  /** Autonomous kernel optimisation: the thresholds of its proposals (README "AKO"). */
  ako: z
    .object({
      /** Task outcomes of this many recent seconds are measured. */
      windowSeconds: z.number().int().min(1).max(86_400).default(300),
      /** Fewer tasks than this in the window: error rate and queue wait are not judged. */
      minTasks: z.number().int().min(1).default(20),
      /** Queue wait p90 of a kernel at or above which it needs capacity. */
      queueWaitP90Ms: z.number().positive().default(100),
      /** Mean utilisation of a kernel's active nodes at or above which it needs capacity. */
      utilisationHigh: z.number().gt(0).max(1).default(0.8),
      /** Every active node at or below this (and no queue wait): a node or thread is surplus. */
      utilisationLow: z.number().min(0).lt(1).default(0.05),
      /** A node's error rate at or above which it is proposed for draining. */
      errorRateDrain: z.number().gt(0).max(1).default(0.5),
      maxNodesPerKernel: z.number().int().min(1).max(64).default(8),
      maxThreadsPerNode: z.number().int().min(1).max(64).default(8),
    })
    .prefault({}),
  /** Governance of platform actions (docs/groups/autonomous.md "Governance"). */
  governance: z
    .object({
      /** A pending approval expires after this many seconds. */
      approvalTtlSeconds: z.number().int().min(1).max(30 * 86400).default(86_400),
      /** A change touching more than this share of a kernel's nodes waits for a human. */
      maxBlastRadius: z.number().gt(0).max(1).default(0.5),
      /** UTC windows in which changes may run without a human; none: any time. Days 0 (Sunday) to 6. */
      changeWindows: z.array(z.object({ days: z.array(z.number().int().min(0).max(6)).min(1), start: z.string().regex(/^\d\d:\d\d$/), end: z.string().regex(/^\d\d:\d\d$/) })).default([]),
      /** Action kinds an agent may run without a human (by default every agent action waits). */
      autoApprove: z.array(z.string()).default([]),
    })
    .prefault({}),
  /** The cognitive (planning) loop of plugin agi. */
  agi: z
    .object({
      /** Seconds between iterations of a started loop, unless its start names another. */
      loopIntervalSeconds: z.number().int().min(1).max(86_400).default(300),
      /** KPI window of an iteration, in seconds. */
      windowSeconds: z.number().int().min(60).max(30 * 86400).default(3600),
      /** A workflow failure rate above this is an objective the loop acts on. */
      workflowFailureTarget: z.number().min(0).max(1).default(0.05),
    })
    .prefault({}),
  /** Compute inventory (plugins compute, uaicp, aiops): the local provider and outside clouds. */
  compute: z
    .object({
      /** This machine as a provider: its one region, and what an operator says an hour of it costs. */
      local: z
        .object({
          region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/).default('local'),
          location: z.string().max(200).default('this machine'),
          /** Data residency of the region (e.g. EU), null when not declared. */
          residency: z.string().max(32).nullable().default(null),
          price: computePrice.optional(),
        })
        .prefault({}),
      /** Outside clouds by id; each answers 503 NOT_CONFIGURED until its credentials are set. */
      providers: z
        .record(
          z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a provider id'),
          z.object({
            kind: z.enum(['aws', 'gcp', 'azure']),
            regions: z.array(z.object({ id: z.string().min(1).max(64), location: z.string().max(200).optional(), residency: z.string().max(32).nullable().default(null) })).default([]),
            credentials: z.record(z.string(), z.string()).optional(),
            price: computePrice.optional(),
          }),
        )
        .default({}),
      /** The kernel that runs each workload type (the router measures that kernel's nodes). */
      workloadKernels: z.record(z.string(), z.string()).default({ inference: 'llm', embedding: 'llm', training: 'compute', benchmark: 'compute', analytics: 'analytics', forecasting: 'analytics', trading: 'trading' }),
      /** The nvidia-smi binary read for GPUs; a machine without it has no GPUs. */
      nvidiaSmi: z.string().default('nvidia-smi'),
    })
    .prefault({}),
  plugins: z
    .object({
      /** Folder the host discovers plugins in (compiled output). */
      dir: z.string().optional(),
      /** Plugin ids not to load. */
      disabled: z.array(z.string()).default([]),
    })
    .prefault({}),
  mesh: z
    .object({
      /** Folders holding kernels/<domain>/{manifest,worker}.js; empty means the built-in kernels. */
      kernelDirs: z.array(z.string()).default([]),
      /** Load only these domains (all when unset). */
      only: z.array(z.string()).optional(),
      /** Override every manifest's node count / threads per node. */
      nodesPerKernel: z.number().int().min(0).max(64).optional(),
      threadsPerNode: z.number().int().min(1).max(64).optional(),
      /** Bounds on what node management may add: nodes of one kernel, and threads of the whole mesh. */
      maxNodesPerKernel: z.number().int().min(1).max(1024).default(16),
      maxThreads: z.number().int().min(1).max(4096).default(64),
      /** Per-domain overrides: {"trading": {"nodes": 3, "threads": 2}}. */
      kernels: z.record(z.string(), z.object({ nodes: z.number().int().min(0).max(64).optional(), threads: z.number().int().min(1).max(64).optional() })).default({}),
      /** Heartbeat interval inside every worker, and how many missed beats make a node unhealthy. */
      heartbeatMs: z.number().int().min(10).max(60_000).default(1000),
      missedHeartbeats: z.number().int().min(1).max(100).default(3),
      /** How long a task waits for an eligible node before it gets 503. */
      noNodeWaitMs: z.number().int().min(0).max(60_000).default(2000),
      /** Longest a task may run before it is aborted (504-like 503). */
      taskTimeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
      /** Tasks a node queues beyond its threads before it counts as full. */
      maxQueuePerNode: z.number().int().min(0).max(100_000).default(256),
      /** Default drain deadline when the request gives none. */
      drainDeadlineSeconds: z.number().int().min(1).max(86_400).default(300),
      health: z
        .object({
          windowSeconds: z.number().int().min(1).max(3600).default(60),
          minSamples: z.number().int().min(1).default(5),
          errorRateUnhealthy: z.number().min(0).max(1).default(0.5),
          loopDelayDegradedMs: z.number().positive().default(200),
          heapDegradedRatio: z.number().gt(0).max(1).default(0.9),
        })
        .prefault({}),
      breaker: z
        .object({
          errorThresholdPercentage: z.number().min(1).max(100).default(50),
          resetTimeoutMs: z.number().int().min(100).default(10_000),
          volumeThreshold: z.number().int().min(1).default(10),
          rollingWindowMs: z.number().int().min(1000).default(10_000),
        })
        .prefault({}),
      outcomes: z.object({ flushMs: z.number().int().min(10).default(1000), batchSize: z.number().int().min(1).default(500) }).prefault({}),
      /** Settings handed to a kernel's workers, by domain (e.g. llm: {base_url, api_key, model}). */
      settings: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
    })
    .prefault({}),
  /** Chaos experiments on the live mesh (core/chaos, /ops/resilience). */
  chaos: z
    .object({
      /** Steady-state probes (mesh pings) per round and target domain, how many at once, and each one's timeout. */
      probes: z
        .object({
          count: z.number().int().min(1).max(1000).default(20),
          concurrency: z.number().int().min(1).max(64).default(2),
          timeoutMs: z.number().int().min(10).max(60_000).default(2000),
          /** Pause between probe rounds during the injection and while waiting for recovery. */
          intervalMs: z.number().int().min(0).max(60_000).default(250),
        })
        .prefault({}),
      /** How long after rollback the steady state may take to come back before the experiment counts as not recovered. */
      recoveryTimeoutSeconds: z.number().int().min(1).max(3600).default(30),
      /** No experiment injects longer than this, whatever its scenario says (the record shows the duration used). */
      maxDurationSeconds: z.number().int().min(1).max(3600).default(600),
      /** A running experiment's claim in the database; another process takes over (rolls back) an experiment whose claim ran out. */
      leaseMs: z.number().int().min(200).max(600_000).default(15_000),
      /** Seed the built-in scenarios at start (idempotent). */
      seedBuiltins: z.boolean().default(true),
      /** POST /chaos/validate_production: a small latency experiment per domain, one domain at a time. */
      validation: z
        .object({
          durationSeconds: z.number().int().min(1).max(600).default(5),
          latencyMs: z.number().int().min(1).max(10_000).default(50),
          /** Nodes per domain that get the latency (the blast radius). */
          maxNodes: z.number().int().min(1).max(64).default(1),
          minSuccessRatio: z.number().min(0).max(1).default(0.99),
          maxLatencyP99Ms: z.number().positive().default(1000),
          /** Domains that would not finish within this budget are skipped (the verdict is then inconclusive). */
          maxTotalSeconds: z.number().int().min(1).max(3600).default(45),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Prices, costs and payment settings of monetization and billing (docs/groups/billing.md). */
  billing: z
    .object({
      /** Currency of plan prices, unit prices, costs and invoices. */
      currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code').default('USD'),
      /** Currencies a payment may be in, with their decimals (ISO 4217 minor units). */
      currencies: z.record(z.string().regex(/^[A-Z]{3}$/), z.number().int().min(0).max(4)).default({ USD: 2, EUR: 2, GBP: 2, CHF: 2, JPY: 0 }),
      /** Monthly fee of each plan, in minor units. */
      planPrices: z.record(z.string(), z.number().int().min(0)).default({ free: 0, pro: 4900, enterprise: 49900 }),
      /** Metered prices by plan: `amount` minor units per `per` units of a metric. */
      unitPrices: z.record(z.string(), z.record(z.string(), unitPrice)).default({
        pro: { requests: { amount: 5, per: 1000 }, kernel_cpu_ms: { amount: 1, per: 60_000 }, llm_tokens: { amount: 2, per: 1000 }, telemetry_events: { amount: 1, per: 1000 } },
        enterprise: { requests: { amount: 2, per: 1000 }, kernel_cpu_ms: { amount: 1, per: 120_000 }, llm_tokens: { amount: 1, per: 1000 }, telemetry_events: { amount: 1, per: 2000 } },
      }),
      /** What the platform pays per unit (profitability): same form, storage_bytes per GiB-month. */
      unitCosts: z.record(z.string(), unitPrice).default({
        kernel_cpu_ms: { amount: 1, per: 360_000 },
        llm_tokens: { amount: 1, per: 4000 },
        storage_bytes: { amount: 3, per: 1_073_741_824 },
      }),
      /** Add-ons: a monthly price and the features they enable. */
      addons: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,31}$/), z.object({ price: z.number().int().min(0), features: z.array(z.string()).default([]), summary: z.string().default('') })).default({
        sla: { price: 19_900, features: ['sla'], summary: 'Service-level agreement with credits' },
        compliance: { price: 9_900, features: ['compliance'], summary: 'Compliance exports and reports' },
      }),
      /** Tax on invoices, in basis points of the subtotal (0: none). */
      taxRateBps: z.number().int().min(0).max(10_000).default(0),
      /** Publisher's share of a marketplace run's price, in basis points. */
      publisherShareBps: z.number().int().min(0).max(10_000).default(7_000),
      /** Fee of the local payment provider: basis points of the amount plus a fixed part (minor units). */
      localFee: z.object({ bps: z.number().int().min(0).max(10_000).default(0), fixed: z.number().int().min(0).default(0) }).prefault({}),
      /** Requests a new API key may make per minute unless it says otherwise. */
      defaultKeyRatePerMinute: z.number().int().min(1).default(60),
      /** How often metered usage is written (a batch per flush). */
      usageFlushMs: z.number().int().min(10).max(60_000).default(1000),
    })
    .prefault({}),
  /** Commercial and customer groups: SLA defaults, lead enrichment, experiments. */
  commercial: z
    .object({
      /** An outside lead-enrichment service (POST {email, domain} -> JSON); unset = only what the platform knows. */
      enrichmentUrl: z.string().regex(/^https?:\/\//, 'an http(s):// URL').optional(),
      /** Most tasks per variant of an ROI experiment. */
      maxExperimentSamples: z.number().int().min(2).max(10_000).default(500),
    })
    .prefault({}),
  secsuite: z
    .object({
      endpointsec: z
        .object({
          /** The endpoint vendor's forwarder: responses (quarantine, disable user) are POSTed there as signed webhooks. */
          vendorUrl: z.string().url().optional(),
          /** HMAC-SHA256 key of those webhooks' X-Signature header. */
          vendorSecret: z.string().min(16).optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Certificates, HTTPS, deployments, checks, scheduler and upgrades (plugins/automation, docs/groups/automation.md). */
  automation: z
    .object({
      /** Key that encrypts private keys at rest; derived from the JWT secret when unset. */
      keyEncryptionKey: z.string().min(32, 'at least 32 characters').optional(),
      certificates: z
        .object({
          validityDays: z.number().int().min(1).max(825).default(90),
          /** A certificate this many days or fewer before its end is renewed by the scheduler. */
          renewBeforeDays: z.number().int().min(0).max(365).default(30),
          caCommonName: z.string().min(1).default('platform-control local CA'),
        })
        .prefault({}),
      /** An ACME CA; unset = the local CA issues. */
      acme: z
        .object({
          directoryUrl: z.string().regex(/^https?:\/\//, 'an http(s):// URL').optional(),
          email: z.string().email().optional(),
          /** PEM file of the CA that signed the ACME server's own TLS certificate (private ACME servers). */
          caFile: z.string().optional(),
          /** Longest an order may take (challenge, finalize, download). */
          timeoutMs: z.number().int().min(1000).default(60_000),
        })
        .prefault({}),
      https: z
        .object({
          /** Port of the TLS listener /automation/https/enable starts (0: any free port). */
          port: z.number().int().min(0).max(65535).default(8443),
          host: z.string().optional(),
        })
        .prefault({}),
      /** Targets /automation/health/check probes besides the database, Redis and every kernel. */
      healthTargets: z
        .array(
          z.object({
            name: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/),
            kind: z.enum(['http', 'tcp', 'tls']),
            url: z.string().optional(),
            host: z.string().optional(),
            port: z.number().int().min(1).max(65535).optional(),
          }),
        )
        .default([]),
      probeTimeoutMs: z.number().int().min(50).max(60_000).default(5000),
      scheduler: z
        .object({
          /** The runner's claim in the database; another host takes over after it runs out. */
          leaseMs: z.number().int().min(200).max(600_000).default(15_000),
          /** Cron expressions (croner) of the jobs; seconds field allowed. */
          healthCron: z.string().default('*/5 * * * *'),
          httpsCron: z.string().default('*/15 * * * *'),
          renewalCron: z.string().default('17 * * * *'),
          /** A database backup into <dataDir>/backups (pg_dump on PostgreSQL), the newest backupKeep kept. */
          backupCron: z.string().default('40 2 * * *'),
          backupKeep: z.number().int().min(1).max(365).default(7),
        })
        .prefault({}),
      deployments: z
        .object({
          /** Pings a new node must answer, all of them, for the health gate to pass. */
          gateProbes: z.number().int().min(1).max(100).default(5),
          gateTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
          drainDeadlineSeconds: z.number().int().min(1).max(3600).default(60),
          /** A deployment in flight holds a lease this long, renewed every third of it; one whose lease runs out (its process died) is settled as failed by any host. */
          leaseMs: z.number().int().min(500).max(600_000).default(15_000),
        })
        .prefault({}),
      upgrade: z
        .object({
          /** Folder of candidate builds (each a folder with plugins/<id>/index.js); unset = only the running build. */
          candidatesDir: z.string().optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  hub: z
    .object({
      /** Server ping interval; a client that misses a pong by the next ping is dropped. */
      pingIntervalMs: z.number().int().min(100).default(30_000),
      /** How often each client's token is checked again (expiry, logout, password reset). */
      recheckMs: z.number().int().min(50).default(2000),
      /** A client whose unsent data passes this many bytes is dropped. */
      maxBufferedBytes: z.number().int().min(1024).default(1024 * 1024),
      /** Redis channel for fan-out across hosts (with REDIS_URL). */
      channel: z.string().min(1).default('platform-control:events'),
    })
    .prefault({}),
  telemetry: z
    .object({
      /** service.name of every span and metric. */
      serviceName: z.string().min(1).default('platform-control'),
      /** HTTP request count and latency by route and status (off only to measure their cost). */
      httpMetrics: z.boolean().default(true),
      /** Process and runtime metrics (heap by space, GC, event loop, CPU, memory) on /metrics/ and OTLP. */
      runtimeMetrics: z.boolean().default(true),
      /** Resolution of the event-loop delay histogram the runtime metrics sample, in ms. */
      eventLoopPrecisionMs: z.number().int().min(1).max(1000).default(10),
      /** Most events in one ingest batch (`{events: [...]}`); more answers 413. */
      maxBatch: z.number().int().min(1).max(10_000).default(1000),
      /** SQLite: entries of the hot trace-index table that trigger their merge into the cold one. */
      traceMergeAt: z.number().int().min(1).max(10_000_000).default(32_768),
      otlp: z
        .object({
          /** Base URL of an OTLP/HTTP collector (e.g. http://collector:4318); set = spans and metrics are exported. */
          endpoint: z.string().regex(/^https?:\/\//, 'an http(s):// URL').optional(),
          exportIntervalMs: z.number().int().min(100).default(15_000),
        })
        .prefault({}),
      /** The OTLP/HTTP receiver (plugin otlp): POST /otlp/v1/traces, /otlp/v1/metrics, /otlp/v1/logs. */
      otlpReceiver: z
        .object({
          /** Also serve the bare /v1/traces, /v1/metrics and /v1/logs (an exporter given only the service's base URL). */
          rootPaths: z.boolean().default(false),
          /** Largest protobuf body, after gzip inflation (JSON bodies: server.bodyLimit). */
          maxBodyBytes: z.number().int().min(1024).max(256 * 1024 * 1024).default(16 * 1024 * 1024),
          /** Export requests decoded and stored at once by this host; more answer 429 with Retry-After. */
          maxConcurrent: z.number().int().min(1).max(1024).default(8),
          /** The Retry-After of those 429s (and of 503s while stopping or when the store fails). */
          retryAfterSeconds: z.number().int().min(1).max(3600).default(1),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Outbound calls of plugin interop's http workflow steps (docs/groups/stability.md). */
  interop: z
    .object({
      /**
       * Host names (or host:port) the plugin may call. Empty = none: the server would otherwise
       * call any address a tenant names (SSRF: its own loopback, cloud metadata).
       */
      allowedHosts: z.array(z.string().min(1).max(255)).max(1000).default([]),
      httpSteps: z
        .object({
          timeoutMs: z.number().int().min(100).max(600_000).default(30_000),
          maxResponseBytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Inbound webhooks (plugin leads): POST /webhooks/scheduler. */
  webhooks: z
    .object({
      /** HMAC-SHA256 secret shared with the scheduling tool; unset answers 503 NOT_CONFIGURED. */
      schedulerSecret: z.string().min(16, 'at least 16 characters').optional(),
      /** How far a signed timestamp may be from our clock. */
      toleranceSeconds: z.number().int().min(1).max(3600).default(300),
      /**
       * The tenant whose workflows a `workflow.run` delivery may start (as the service identity
       * `webhook:scheduler`, role member); unset = the platform tenant.
       */
      schedulerTenant: z.string().min(1).max(64).optional(),
    })
    .prefault({}),
  /** The public contact form (plugin leads). */
  contact: z
    .object({
      /** Submissions accepted per client address in an hour. */
      perAddressPerHour: z.number().int().min(1).max(10_000).default(5),
      maxMessageChars: z.number().int().min(100).max(100_000).default(5000),
    })
    .prefault({}),
});

// free, pro and enterprise always exist; config can change them or add plans.
export const DEFAULT_PLANS: Record<string, { requestsPerMinute: number; features: string[] }> = {
  free: { requestsPerMinute: 10, features: ['api', 'kernels', 'websocket_stream', 'telemetry_ingest'] },
  pro: {
    requestsPerMinute: 100,
    features: ['api', 'kernels', 'websocket_stream', 'telemetry_ingest', 'workflows', 'webhooks', 'chaos', 'aiops', 'automation', 'copilot'],
  },
  enterprise: {
    requestsPerMinute: 1000,
    features: [
      'api', 'kernels', 'websocket_stream', 'telemetry_ingest', 'workflows', 'webhooks', 'chaos', 'aiops', 'automation', 'copilot',
      'enterprise', 'agi', 'compliance', 'secsuite', 'interop', 'sla',
    ],
  },
};

function mergePlans(v: unknown): unknown {
  if (v === undefined) return structuredClone(DEFAULT_PLANS);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const out: Record<string, unknown> = structuredClone(DEFAULT_PLANS);
  for (const [k, p] of Object.entries(v)) {
    const base = out[k];
    out[k] = base && p && typeof p === 'object' && !Array.isArray(p) ? { ...(base), ...p } : p;
  }
  return out;
}

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
