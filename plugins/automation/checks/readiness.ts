import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import type { Config } from '../../../core/config';
import { isPostgres, nowIso, type Db } from '../../../core/db';
import type { AccountsService } from '../../../core/contracts/accounts';
import type { Mesh } from '../../../core/mesh/mesh';

export interface Check {
  name: string;
  ok: boolean;
  evidence: string;
}

/** A count of another plugin's table, or null when that plugin is not installed (its table is absent). */
async function countOf(db: Db, table: string, where: (q: ReturnType<Db>) => void = () => undefined): Promise<number | null> {
  if (!(await db.schema.hasTable(table))) return null;
  const q = db(table);
  where(q);
  const row = await q.count<{ n: number | string }[]>('* as n').first();
  return Number(row?.n ?? 0);
}

function pgDumpVersion(): Promise<string | null> {
  return new Promise((resolve) => execFile('pg_dump', ['--version'], { timeout: 5000 }, (err, out) => resolve(err ? null : out.trim())));
}

/** Production readiness from live state; each check says what it looked at. */
export async function readinessChecks(db: Db, config: Config, mesh: Mesh, accounts: AccountsService, httpsRunning: boolean): Promise<Check[]> {
  const checks: Check[] = [];
  const admin = await db('users').where({ email: config.auth.adminEmail.toLowerCase() }).first();
  if (!admin) {
    checks.push({ name: 'admin_password_changed', ok: true, evidence: `no bootstrap admin account ${config.auth.adminEmail} exists` });
  } else if (config.auth.adminPassword) {
    const same = (await accounts.passwordMatches(admin.email, config.auth.adminPassword)) === true;
    checks.push({ name: 'admin_password_changed', ok: !same, evidence: same ? `${admin.email} still has the password of auth.adminPassword` : `${admin.email} no longer has the bootstrap password` });
  } else {
    const changed = admin.updated_at > admin.created_at;
    checks.push({ name: 'admin_password_changed', ok: changed, evidence: changed ? `${admin.email} changed since its creation (${admin.updated_at})` : `${admin.email} has kept the generated first password since ${admin.created_at}` });
  }
  checks.push({ name: 'jwt_secret_set', ok: !!config.auth.jwtSecret, evidence: config.auth.jwtSecret ? 'auth.jwtSecret (JWT_SECRET) is set' : `auth.jwtSecret is unset: a secret generated into ${config.dataDir}/jwt-secret is used` });
  checks.push({ name: 'https_on', ok: httpsRunning, evidence: httpsRunning ? 'the TLS listener of /automation/https/enable is running' : 'no TLS listener runs on this host' });
  if (isPostgres(db)) {
    const v = await pgDumpVersion();
    checks.push({ name: 'backups_possible', ok: !!v, evidence: v ? `pg_dump found: ${v}` : 'pg_dump is not on the PATH' });
  } else {
    const conn = await db.client.acquireConnection();
    const ok = typeof conn.backup === 'function';
    await db.client.releaseConnection(conn);
    checks.push({ name: 'backups_possible', ok, evidence: ok ? 'the SQLite online backup API is available on the connection' : 'the SQLite driver has no backup API' });
  }
  const subs = await countOf(db, 'alert_subscriptions');
  checks.push({ name: 'alert_subscriptions', ok: !!subs, evidence: subs === null ? 'the alerts plugin is not installed' : `${subs} alert subscriptions` });
  const domains = mesh.kernels().map((k) => k.id);
  const missing = domains.filter((d) => !config.slo.domains[d]);
  checks.push({ name: 'slos_defined', ok: domains.length > 0 && missing.length === 0, evidence: missing.length ? `no SLO in slo.domains for ${missing.join(', ')}` : `SLOs for ${domains.join(', ') || 'no kernels'}` });
  const critical = await countOf(db, 'incidents', (q) => q.where({ severity: 'critical' }).whereIn('state', ['open', 'mitigated']));
  checks.push({ name: 'no_open_critical_incidents', ok: !critical, evidence: critical === null ? 'the incidents plugin is not installed' : `${critical} open critical incidents` });
  return checks;
}

export async function saveReport(db: Db, checks: Check[], by: string) {
  const row = { id: crypto.randomUUID(), ready: checks.every((c) => c.ok), checks: JSON.stringify(checks), created_by: by, created_at: nowIso() };
  await db('automation_readiness').insert(row);
  return { id: row.id, ready: row.ready, checks, created_by: by, created_at: row.created_at };
}
