import { drive, type Row } from './harness';
import { telemetryRows } from './telemetry';

export interface BenchContext {
  url: string;
  adminEmail: string;
  adminPassword: string;
}

/** One figure (or a few) of the service; areas of the service add theirs to the list. */
export interface Scenario {
  name: string;
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
    // Starts its own services (a store to seed, with and without HTTP metrics).
    name: 'telemetry',
    run: () => telemetryRows(),
  },
];
