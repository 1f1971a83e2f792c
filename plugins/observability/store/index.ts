import type { Config } from '../../../core/config';
import type { TelemetryStore } from '../../../core/contracts/telemetry';
import type { Db } from '../../../core/db';
import type { TelemetryService } from '../../../core/telemetry';
import { ingest } from './ingest';
import { ATTR_CACHE_MAX, EventRecorder } from './record';
import { EventStore } from './store';
import { evaluationMetrics, llmMetrics, outcomeMetrics, parseGroups, policyMetrics } from './views';

export { EventStore, telemetryMigrations } from './store';
export type { EventRow } from './events';

/** The provided store: the events table, ingest (recorded through the host's OpenTelemetry SDK) and the aggregates. */
export class TelemetryEvents implements TelemetryStore {
  readonly store: EventStore;
  private readonly recorder: EventRecorder;

  constructor(private readonly config: Config, private readonly db: Db, telemetry: TelemetryService) {
    this.store = new EventStore(db, { traceMergeAt: config.telemetry.traceMergeAt });
    this.recorder = new EventRecorder(telemetry.sdk);
    telemetry.caches.track({ name: 'telemetry.label_sets', entries: () => this.recorder.rememberedLabelSets, limit: ATTR_CACHE_MAX });
  }

  ingest: TelemetryStore['ingest'] = (type, tenantId, body) => ingest(this.store, this.recorder, this.config.telemetry.maxBatch, type, tenantId, body);
  stats: TelemetryStore['stats'] = (tenantId) => this.store.stats(tenantId);
  countsByType: TelemetryStore['countsByType'] = (w) => this.store.countsByType(w);
  count: TelemetryStore['count'] = (w) => this.store.count(w);
  hourly: TelemetryStore['hourly'] = (f) => this.store.hourly(f);
  parseGroups: TelemetryStore['parseGroups'] = parseGroups;
  llmMetrics: TelemetryStore['llmMetrics'] = (w, g) => llmMetrics(this.db, w, g);
  policyMetrics: TelemetryStore['policyMetrics'] = (w, g) => policyMetrics(this.db, w, g);
  outcomeMetrics: TelemetryStore['outcomeMetrics'] = (w, g) => outcomeMetrics(this.db, w, g);
  evaluationMetrics: TelemetryStore['evaluationMetrics'] = (w, g) => evaluationMetrics(this.db, w, g);
}
