// `make screenshots`: every page of the console, with live data made through the API of a
// real host, as PNGs in screenshots/ (git-ignored). Not a test: a look for people.
import fs from 'node:fs';
import path from 'node:path';
import { startHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';
import { ingestTrace, openBrowser, signIn } from './browser';

const OUT = path.resolve(process.env.SCREENSHOTS_DIR ?? 'screenshots');

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const t = await startHost({ config: { mesh: { only: ['analytics', 'trading'], nodesPerKernel: 2 } } });
  const b = await openBrowser();
  try {
    await eventually(() => t.host.services.mesh.globalHealth.health === 'healthy', 15_000, 'healthy mesh');
    // Work for the SLOs, the node counters and the workflow runs.
    for (let i = 0; i < 20; i++) await t.request('POST', '/kernels/analytics/tasks/describe', { body: { values: [i, i + 1, i * 2] } });
    const def = await t.request('POST', '/workflows', { body: { name: 'Daily figures', steps: [{ id: 'stats', kernel: 'analytics', task: 'describe', input: { values: [3, 1, 4, 1, 5] } }] } });
    await t.request('POST', `/workflows/${def.body.id}/run`);
    await t.request('POST', '/mesh/nodes/trading-2/drain', { body: { deadline_seconds: 600 } });
    await t.request('POST', '/mesh/nodes/analytics-2/pause');
    const incident = await t.request('POST', '/incidents/detect', { body: { title: 'Trading latency above objective', severity: 'high', kernel_id: 'trading', description: 'p99 over 250 ms for 10 minutes' } });
    await t.request('POST', `/incidents/${incident.body.id}/mitigate`, { body: { action: 'drain_node', target: 'trading-1', note: 'move load off the slow node' } });
    const trace = await ingestTrace(t);
    const scenario = await t.request('POST', '/ops/resilience/scenarios', {
      body: { name: 'Latency on analytics', injection_type: 'latency', target_domains: ['analytics'], parameters: { latency_ms: 100 }, duration_seconds: 120 },
    });
    const run = await t.request('POST', `/ops/resilience/scenarios/${scenario.body.scenario_id}/run`);
    if (run.status !== 202) throw new Error(`the chaos run answered ${run.status}: ${run.text}`);

    const page = b.page;
    await page.goto(`${t.url}/console/`);
    await page.screenshot({ path: path.join(OUT, '01-login.png') });
    await signIn(page, t);
    const shots: Array<[string, string, string]> = [
      ['02-mesh', '#/mesh', 'tr[data-node="trading-2"]'],
      ['03-node', '#/nodes/trading-2', '.drain'],
      ['04-incidents', '#/incidents', 'table'],
      ['05-incident', `#/incident/${incident.body.id}`, 'ol.timeline li'],
      ['06-slo', '#/slo', 'figure'],
      ['07-workflows', '#/workflows', 'table'],
      ['08-chaos', '#/chaos', 'td >> text=running'],
      ['09-telemetry', '#/telemetry', 'figure'],
      ['10-trace', `#/traces/${trace}`, 'figure'],
    ];
    for (const [name, hash, ready] of shots) {
      await page.goto(`${t.url}/console/${hash}`);
      await page.locator(ready).first().waitFor();
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
      console.log(`${OUT}/${name}.png`);
    }
    await t.request('POST', '/ops/resilience/halt');
  } finally {
    await b.close();
    await t.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
