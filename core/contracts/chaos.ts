// What other plugins may ask of chaos engineering (plugin `chaos`): whether an experiment is
// running, so that work which must not overlap one (a stress test, a deployment) can refuse.
import { createServiceRef } from '../plugin';

export interface ActiveExperiment {
  id: string;
  tenant_id: string;
  scenario_name: string;
  injection_type: string;
  target_domains: string[];
  started_at: string;
}

export interface ChaosRuns {
  /** Experiments running now on any host (from the shared store). */
  active(): Promise<ActiveExperiment[]>;
}

export const chaosRunsRef = createServiceRef<ChaosRuns>('chaos.runs');
