import { drive, type Row } from './harness';
import { authScenario } from './auth';
import { healthFanOut, taskApiVsPool } from './mesh';
import { telemetryRows } from './telemetry';
import { opsWorkflowsSlo } from './ops';
import { chaosScenario } from './chaos';
import { otlpScenario } from './otlp';
import { dbReads } from './db-reads';
import { taskThroughput } from './task-throughput';
import { forwarding } from './forwarding';
import { pgIngest } from './pg-ingest';
import { scale } from './scale';

export interface BenchContext {
  url: string;
  adminEmail: string;
  adminPassword: string;
}

/**
 * One figure (or a few) of the service. An area adds its section with one line in the list
 * below (its own file exports the Scenario); run.ts prints each row and, with BENCH_JSON,
 * writes it.
 */
export interface Scenario {
  name: string;
  /** Starts what it measures itself; needs no service from run.ts. */
  selfContained?: boolean;
  /** Runs only when BENCH_ONLY names it (it takes minutes or gigabytes). */
  explicit?: boolean;
  run(ctx: BenchContext): Promise<Row[]>;
}

export const scenarios: Scenario[] = [
  {
    name: 'health',
    async run(ctx) {
      return [{ name: 'GET /health/ (service)', figures: await drive({ url: `${ctx.url}/health/` }) }];
    },
  },
  {
    // Operations console reads with an admin token (needs POST /auth/login from the auth area).
    name: 'ops console',
    async run(ctx) {
      const login = await fetch(`${ctx.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ctx.adminEmail, password: ctx.adminPassword }),
      });
      if (!login.ok) {
        process.stdout.write(`ops console: skipped, POST /auth/login answered ${login.status}\n`);
        return [];
      }
      const { token } = (await login.json()) as { token: string };
      const headers = { authorization: `Bearer ${token}` };
      for (let i = 0; i < 50; i++) {
        await fetch(`${ctx.url}/incidents/detect`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `bench incident ${i}`, severity: 'low', domain: 'trading' }),
        });
      }
      return [
        { name: 'GET /ops/incidents/active (50 open)', figures: await drive({ url: `${ctx.url}/ops/incidents/active`, headers }) },
        { name: 'GET /incidents/summary', figures: await drive({ url: `${ctx.url}/incidents/summary`, headers }) },
        { name: 'GET /ops/actions/history?limit=50', figures: await drive({ url: `${ctx.url}/ops/actions/history?limit=50`, headers }) },
      ];
    },
  },
  authScenario,
  dbReads,
  taskApiVsPool,
  taskThroughput,
  forwarding,
  healthFanOut,
  {
    // Starts its own services (a store to seed, with and without HTTP metrics).
    name: 'telemetry',
    selfContained: true,
    run: () => telemetryRows(),
  },
  pgIngest,
  scale,
  opsWorkflowsSlo,
  chaosScenario,
  otlpScenario,
];
