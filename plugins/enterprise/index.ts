// Enterprise (spec 4.16): processes, organisational memory, KPIs by department, revenue
// optimisation on the trading kernel, governance, human-AI approvals and feedback, the
// digital twin and resource planning. Decisions and examples: docs/groups/autonomous.md.
import { definePlugin, provide } from '../../core/plugin';
import { core } from '../../core/services';
import { deps, jobsRef } from './deps';
import { Jobs } from './jobs';
import { enterpriseMigrations } from './migrations';
import { governanceRoutes } from './routes-governance';
import { kpiRoutes } from './routes-kpi';
import { processRoutes } from './routes-processes';
import { revenueRoutes } from './routes-revenue';
import { twinRoutes } from './routes-twin';

export default definePlugin({
  id: 'enterprise',
  prefix: '/enterprise',
  deps,
  provides: [provide(jobsRef, { deps: { log: core.log }, factory: ({ log }) => new Jobs(log), stop: (j) => j.stop() })],
  migrations: enterpriseMigrations,
  routes: (route) => [...processRoutes(route), ...kpiRoutes(route), ...revenueRoutes(route), ...governanceRoutes(route), ...twinRoutes(route)],
});
