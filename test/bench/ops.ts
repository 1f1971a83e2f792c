// Second half of the operations console: SLO report, workflow runs and listing, AKO recompute.
import { drive, type Row } from './harness';
import type { Scenario } from './scenarios';

export const opsWorkflowsSlo: Scenario = {
  name: 'ops console: workflows, SLOs, AKO',
  async run(ctx): Promise<Row[]> {
    const login = await fetch(`${ctx.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ctx.adminEmail, password: ctx.adminPassword }) });
    if (!login.ok) {
      process.stdout.write(`ops workflows: skipped, POST /auth/login answered ${login.status}\n`);
      return [];
    }
    const { token } = (await login.json()) as { token: string };
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // Real outcomes for the SLO report: 500 tasks on the analytics kernel.
    for (let i = 0; i < 500; i++) await fetch(`${ctx.url}/kernels/analytics/tasks/describe`, { method: 'POST', headers, body: JSON.stringify({ values: [1, 2, 3, i] }) });
    const def = await fetch(`${ctx.url}/api/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'bench', steps: [{ id: 'd', kernel: 'analytics', task: 'describe', input: { values: [1, 2, 3] } }, { id: 'p', kernel: 'analytics', task: 'percentiles', input: { values: ['${steps.d.output.mean}', 4] } }] }),
    });
    const { id } = (await def.json()) as { id: string };
    return [
      { name: 'GET /ops/slo (500+ outcomes)', figures: await drive({ url: `${ctx.url}/ops/slo`, headers }) },
      { name: 'POST /workflows/{id}/run (2 steps, 202)', figures: await drive({ url: `${ctx.url}/workflows/${id}/run`, method: 'POST', headers }) },
      { name: 'GET /ops/workflows?limit=50', figures: await drive({ url: `${ctx.url}/ops/workflows?limit=50`, headers }) },
      { name: 'POST /ops/ako/recompute', figures: await drive({ url: `${ctx.url}/ops/ako/recompute`, method: 'POST', headers, connections: 4 }) },
    ];
  },
};
