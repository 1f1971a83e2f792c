import healthPlugin from '../../plugins/health';
import metricsPlugin from '../../plugins/metrics';
import observability from '../../plugins/observability';
import opsObservability from '../../plugins/ops-observability';

/** The plugins the telemetry tests start. */
export const telemetryPlugins = [healthPlugin, metricsPlugin, observability, opsObservability];

/** A valid llm-call event; `extra` overrides or adds fields. */
export const llm = (extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  request_model: 'gpt-4o',
  response_model: 'gpt-4o-2024-08-06',
  input_tokens: 100,
  output_tokens: 20,
  duration_ms: 250,
  cost_usd: 0.002,
  finish_reasons: ['stop'],
  ...extra,
});
