// Second half of the operations console: SLO report, workflow runs and listing, AKO recompute.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drive, startService, type Row } from './harness';
import type { Scenario } from './scenarios';

export const opsWorkflowsSlo: Scenario = {
  name: 'ops console: workflows, SLOs, AKO',
  async run(): Promise<Row[]> {
    // A service of its own whose tenant budget does not bind (the figures are not 429s).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-ops-'));
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ plans: { bench: { requestsPerMinute: 1_000_000_000 } }, mesh: { only: ['analytics'] } }));
    const svc = await startService({ CONFIG_FILE: file });
    try {
      return await measure(svc.url, svc.adminEmail, svc.adminPassword);
    } finally {
      svc.proc.kill('SIGTERM');
    }
  },
};

async function measure(url: string, email: string, password: string): Promise<Row[]> {
  const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (!login.ok) throw new Error(`ops bench: POST /auth/login answered ${login.status}`);
  const { token } = (await login.json()) as { token: string };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const assign = await fetch(`${url}/billing/assign-plan`, { method: 'POST', headers, body: JSON.stringify({ tenant_id: 'platform', plan: 'bench' }) });
  if (!assign.ok) throw new Error(`ops bench: POST /billing/assign-plan answered ${assign.status}`);
  // Real outcomes for the SLO report: 500 tasks on the analytics kernel.
  for (let i = 0; i < 500; i++) await fetch(`${url}/kernels/analytics/tasks/describe`, { method: 'POST', headers, body: JSON.stringify({ values: [1, 2, 3, i] }) });
  const def = await fetch(`${url}/api/workflows`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'bench', steps: [{ id: 'd', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } }, { id: 'p', kernel: 'analytics', task: 'percentiles', input: { values: ['${steps.d.output.mean}', 4] } }] }),
  });
  const { id } = (await def.json()) as { id: string };
  return [
    { name: 'GET /ops/slo (500+ outcomes)', figures: await drive({ url: `${url}/ops/slo`, headers }) },
    { name: 'POST /workflows/{id}/run (2 steps, 202)', figures: await drive({ url: `${url}/workflows/${id}/run`, method: 'POST', headers }) },
    { name: 'GET /ops/workflows?limit=50', figures: await drive({ url: `${url}/ops/workflows?limit=50`, headers }) },
    { name: 'POST /ops/ako/recompute', figures: await drive({ url: `${url}/ops/ako/recompute`, method: 'POST', headers, connections: 4 }) },
  ];
}
