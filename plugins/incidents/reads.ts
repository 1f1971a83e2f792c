import type { IncidentQuery, IncidentReads, IncidentSummary } from '../../core/contracts/incidents';
import type { Db } from '../../core/db';
import { ACTIVE } from './store';

/** The incidents other plugins may read (incidentReadsRef). */
export class IncidentReader implements IncidentReads {
  constructor(private readonly db: Db) {}

  async list(q: IncidentQuery): Promise<IncidentSummary[]> {
    const rows = this.db('incidents').orderBy('created_at', 'desc');
    if (q.limit !== undefined) rows.limit(q.limit);
    if (q.tenantId === null) rows.whereNull('tenant_id');
    else rows.where({ tenant_id: q.tenantId });
    if (q.active) rows.whereIn('state', ACTIVE);
    if (q.since) rows.andWhere('created_at', '>=', q.since);
    if (q.until) rows.andWhere('created_at', '<', q.until);
    const found: Array<Record<string, unknown>> = await rows.select('id', 'tenant_id', 'title', 'severity', 'state', 'kernel_id', 'source', 'created_at');
    return found.map((r) => ({
      id: String(r.id), tenant_id: (r.tenant_id as string | null) ?? null, title: String(r.title), severity: String(r.severity), state: String(r.state),
      kernel_id: (r.kernel_id as string | null) ?? null, source: String(r.source), created_at: String(r.created_at),
    }));
  }

  async firstResponses(incidentIds: string[]): Promise<Array<{ incident_id: string; at: string }>> {
    if (!incidentIds.length) return [];
    return this.db('incident_timeline').whereIn('incident_id', incidentIds).andWhere({ source: 'manual' }).whereNot('kind', 'opened').groupBy('incident_id').select('incident_id').min({ at: 'at' });
  }
}
