// Reading incidents for other plugins: provided by plugin `incidents`, used by commercial
// (status page, SLA and status reports). Reads only; opening and moving incidents stay the
// incidents plugin's routes and its own detection.
import { createServiceRef } from '../plugin';

export interface IncidentSummary {
  id: string;
  /** Null for a platform-wide incident. */
  tenant_id: string | null;
  title: string;
  severity: string;
  state: string;
  kernel_id: string | null;
  source: string;
  created_at: string;
}

export interface IncidentQuery {
  /** One tenant's incidents, or (null) the platform-wide ones. */
  tenantId: string | null;
  /** Only those not resolved or closed yet. */
  active?: boolean;
  /** Opened at or after `since` and before `until` (ISO 8601). */
  since?: string;
  until?: string;
  /** At most this many (newest first); all of them without it. */
  limit?: number;
}

export interface IncidentReads {
  list(q: IncidentQuery): Promise<IncidentSummary[]>;
  /** When a person first acted on each incident (its first manual timeline entry after opening). */
  firstResponses(incidentIds: string[]): Promise<Array<{ incident_id: string; at: string }>>;
}

export const incidentReadsRef = createServiceRef<IncidentReads>('incidents.reads');
