// SLOs per domain over their window, with the error budget and its burn rate.
import { api } from '../api';
import { badge, fill, h, num, pct, table, time } from '../dom';
import { barChart } from '../charts';

interface Slo {
  domain: string;
  objective: { availability: number; latency_p99_ms: number; window_seconds: number };
  window: { since: string; until: string };
  tasks: number;
  failed: number;
  success_ratio: number | null;
  latency_ms: { p99?: number | null } | null;
  error_budget: { allowed_failures: number; failures: number; remaining: number };
  burn_rate: number;
  status: string;
}

export function sloPage(main: HTMLElement): () => void {
  const body = h('div', {});
  fill(main, h('h2', {}, 'Service level objectives'), body);
  const load = async () => {
    const r: { timestamp: string; domains_met: number; domains_breached: number; domains_without_data: number; domains: Slo[] } = await api.slo();
    fill(
      body,
      h('p', { class: 'summary' }, `${r.domains_met} met, ${r.domains_breached} breached, ${r.domains_without_data} without data (at ${time(r.timestamp)})`),
      table(
        'SLO status by domain',
        [
          { label: 'Domain', cell: (s) => s.domain },
          { label: 'Status', cell: (s) => badge(s.status) },
          { label: 'Objective', cell: (s) => `${pct(s.objective.availability, 2)}, p99 ≤ ${num(s.objective.latency_p99_ms)} ms` },
          { label: 'Window (days)', cell: (s) => num(s.objective.window_seconds / 86400, 1), numeric: true },
          { label: 'Tasks', cell: (s) => num(s.tasks), numeric: true },
          { label: 'Success', cell: (s) => pct(s.success_ratio, 2), numeric: true },
          { label: 'p99 (ms)', cell: (s) => num(s.latency_ms?.p99 ?? null, 1), numeric: true },
          { label: 'Budget left', cell: (s) => pct(s.error_budget.remaining, 1), numeric: true },
          { label: 'Burn rate', cell: (s) => num(s.burn_rate, 2), numeric: true },
        ],
        r.domains,
      ),
      barChart('Burn rate by domain (1 = the budget lasts exactly the window)', r.domains.map((s) => ({ label: s.domain, value: s.burn_rate })), (v) => num(v, 2)),
    );
  };
  void load();
  const every = window.setInterval(() => void load(), 10_000);
  return () => window.clearInterval(every);
}
