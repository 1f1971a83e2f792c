import { definePlugin } from '../../core/plugin';
import { core } from '../../core/services';

// GET /metrics/: the OpenTelemetry Prometheus exporter's view of every instrument of the
// host (HTTP requests, kernel tasks and gauges, ingest counts, GenAI metrics), served on
// the host's own HTTP server rather than a second port. Public like /health/, so that a
// scraper needs no token; labels carry no tenant ids.
export default definePlugin({
  id: 'metrics',
  prefix: '',
  deps: { telemetry: core.telemetry },
  routes: (route) => [
    route({
      method: 'get',
      path: '/metrics/',
      summary: 'Metrics in the Prometheus text exposition format (OpenTelemetry Prometheus exporter)',
      access: 'public',
      produces: 'text/plain; version=0.0.4',
      handler: async ({ res, services }) => {
        const text = await services.telemetry.sdk.prometheusText();
        res.status(200).type('text/plain; version=0.0.4; charset=utf-8').send(text);
      },
    }),
  ],
});
