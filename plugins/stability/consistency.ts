import { isPostgres, type Db } from '../../core/db';

interface Check {
  id: string;
  description: string;
  tables: string[];
  /** Ids of rows that break the rule (at most `limit`), and how many break it. */
  run(db: Db, limit: number): Promise<{ count: number; samples: string[] }>;
}

async function orphanCheck(db: Db, limit: number, child: string, key: string, parent: string, idCol = 'id') {
  const q = () => db(child).whereNotIn(key, db(parent).select('id'));
  const [{ n }] = await q().count({ n: '*' });
  const samples = (await q().select(idCol).limit(limit)).map((r) => String(r[idCol]));
  return { count: Number(n), samples };
}

// Rules the stores must keep, whoever writes them. A check whose tables are not here (the
// plugin is not loaded) is skipped and says so.
const CHECKS: Check[] = [
  { id: 'users_have_tenants', description: 'Every user belongs to an existing tenant', tables: ['users', 'tenants'], run: (db, l) => orphanCheck(db, l, 'users', 'tenant_id', 'tenants') },
  { id: 'incident_timelines_have_incidents', description: 'Every incident timeline entry belongs to an existing incident', tables: ['incident_timeline', 'incidents'], run: (db, l) => orphanCheck(db, l, 'incident_timeline', 'incident_id', 'incidents', 'n') },
  {
    id: 'incident_state_matches_timeline',
    description: "An incident's state is the state its latest state-changing timeline entry moved it to",
    tables: ['incidents', 'incident_timeline'],
    run: async (db, l) => {
      const latest = `(SELECT t.to_state FROM incident_timeline t WHERE t.incident_id = i.id AND t.to_state IS NOT NULL ORDER BY t.n DESC LIMIT 1)`;
      const rows = await db.raw(`SELECT i.id FROM incidents i WHERE i.state <> COALESCE(${latest}, i.state)`);
      const ids = (Array.isArray(rows) ? rows : rows.rows).map((r: { id: string }) => r.id);
      return { count: ids.length, samples: ids.slice(0, l) };
    },
  },
  { id: 'executions_have_workflows', description: 'Every workflow execution belongs to an existing workflow definition', tables: ['workflow_executions', 'workflow_definitions'], run: (db, l) => orphanCheck(db, l, 'workflow_executions', 'workflow_id', 'workflow_definitions') },
  { id: 'injections_have_experiments', description: 'Every chaos injection belongs to an existing experiment', tables: ['chaos_injections', 'chaos_experiments'], run: (db, l) => orphanCheck(db, l, 'chaos_injections', 'experiment_id', 'chaos_experiments') },
  {
    id: 'submissions_have_leads',
    description: 'Every accepted contact submission points at an existing lead',
    tables: ['contact_submissions', 'leads'],
    run: async (db, l) => {
      const q = () => db('contact_submissions').whereNotNull('lead_id').whereNotIn('lead_id', db('leads').select('id'));
      const [{ n }] = await q().count({ n: '*' });
      return { count: Number(n), samples: (await q().select('id').limit(l)).map((r) => r.id) };
    },
  },
  {
    id: 'search_index_complete',
    description: 'The full-text index holds exactly the indexed documents (SQLite FTS5 table against the document table)',
    tables: ['search_documents'],
    run: async (db) => {
      if (isPostgres(db)) return { count: 0, samples: [] }; // a generated column: cannot disagree
      const [{ a }] = await db('search_documents').count({ a: '*' });
      const [{ b }] = await db('search_fts').count({ b: '*' });
      return { count: Math.abs(Number(a) - Number(b)), samples: [] };
    },
  },
  {
    id: 'no_stale_running_stability_runs',
    description: 'No stress test, benchmark or simulation has been running for more than an hour',
    tables: ['stability_runs'],
    run: async (db, l) => {
      const q = () => db('stability_runs').where('state', 'running').andWhere('started_at', '<', new Date(Date.now() - 3600_000).toISOString());
      const [{ n }] = await q().count({ n: '*' });
      return { count: Number(n), samples: (await q().select('id').limit(l)).map((r) => r.id) };
    },
  },
  {
    // Double entry (plugin monetization): each transaction's entries sum to zero per currency.
    id: 'ledger_balanced',
    description: 'Billing ledger: the entries of every transaction sum to zero in each currency (debits equal credits)',
    tables: ['ledger_entries', 'ledger_transactions'],
    run: async (db, l) => {
      const unbalanced = () => db('ledger_entries').select('transaction_id').groupBy('transaction_id', 'currency').havingRaw('SUM(amount) <> 0');
      const [{ n }] = await db.from(unbalanced().as('u')).countDistinct({ n: 'transaction_id' });
      const orphans = await orphanCheck(db, l, 'ledger_entries', 'transaction_id', 'ledger_transactions', 'transaction_id');
      const samples = [...new Set([...(await unbalanced().limit(l)).map((r) => String(r.transaction_id)), ...orphans.samples])].slice(0, l);
      return { count: Number(n) + orphans.count, samples };
    },
  },
];

export async function consistencyReport(db: Db, sampleLimit = 10) {
  const checks = [];
  for (const c of CHECKS) {
    const present = await Promise.all(c.tables.map((t) => db.schema.hasTable(t)));
    if (present.some((p) => !p)) {
      checks.push({ id: c.id, description: c.description, status: 'skipped' as const, violations: 0, samples: [], reason: `table(s) ${c.tables.filter((_, i) => !present[i]).join(', ')} not present (plugin not loaded)` });
      continue;
    }
    const r = await c.run(db, sampleLimit);
    checks.push({ id: c.id, description: c.description, status: r.count ? ('violation' as const) : ('ok' as const), violations: r.count, samples: r.samples, reason: null });
  }
  return {
    checked_at: new Date().toISOString(),
    consistent: checks.every((c) => c.status !== 'violation'),
    violations: checks.reduce((a, c) => a + c.violations, 0),
    checks,
    method: 'SQL anti-joins and counts over the stores; each rule names the tables it reads',
  };
}
