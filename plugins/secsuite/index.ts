import { definePlugin } from '../../core/plugin';
import { cloudAnalysis } from './cloud/analysis';
import { cloudRoutes } from './cloud/routes';
import { deps } from './deps';
import { endpointRoutes } from './endpoint/routes';
import { endpointViews } from './endpoint/views';
import { secsuiteMigrations } from './migrations';
import { netOps } from './net/ops';
import { netRoutes } from './net/routes';
import { sipRoutes } from './net/sip-routes';

/**
 * Security-suite connectors (spec 4.10): endpoint protection, cloud security (internet and
 * private access), network security (zones, policies, SIP/SBC, self-healing). Each feeds the
 * security service (events, response actions) that plugin `security` provides.
 */
export default definePlugin({
  id: 'secsuite',
  prefix: '/secsuite',
  deps,
  migrations: secsuiteMigrations,
  start: ({ db, sec }) => {
    // Integration keys appear in the tenant security report's key review.
    sec.addKeySource({
      name: 'endpointsec',
      list: async (tenantId) =>
        (await db('endpointsec_keys').where({ tenant_id: tenantId }).whereNull('revoked_at').select('id', 'name', 'created_at', 'last_used_at', 'refused_uses')).map((r) => ({ ...r, refused_uses: Number(r.refused_uses) })),
    });
  },
  routes: (route) => [...endpointRoutes(route), ...endpointViews(route), ...cloudRoutes(route), ...cloudAnalysis(route), ...netRoutes(route), ...netOps(route), ...sipRoutes(route)],
});
