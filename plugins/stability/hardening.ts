import fs from 'node:fs';
import path from 'node:path';
import { isPostgres } from '../../core/db';
import type { AccountsService } from '../../core/contracts/accounts';
import type { Services } from '../../core/services';

export type CheckStatus = 'pass' | 'fail' | 'warn';
export interface CheckResult {
  id: string;
  title: string;
  status: CheckStatus;
  evidence: Record<string, unknown>;
  remedy: string | null;
}

export const CHECKS: Array<{ id: string; title: string }> = [
  { id: 'jwt_secret', title: 'Token signing secret set, long and not a well-known value' },
  { id: 'admin_password_changed', title: 'Bootstrap admin password changed from the configured one' },
  { id: 'https', title: 'Requests arrive over HTTPS' },
  { id: 'body_limit', title: 'Request bodies limited' },
  { id: 'rate_limits', title: 'Rate limits applied to authenticated requests' },
  { id: 'cors', title: 'No CORS grant to arbitrary origins' },
  { id: 'security_headers', title: 'Security headers on answers (nosniff, framing, referrer)' },
  { id: 'production_mode', title: 'Running in production mode' },
  { id: 'database', title: 'Shared database for more than one host (PostgreSQL)' },
];

const WELL_KNOWN = ['changeme', 'secret', 'password', 'jwt-secret', 'your-256-bit-secret', 'development'];

/**
 * Runs each check against this deployment: configuration (values never shown, only their
 * shape), the stored admin account, and real answers of this host over loopback HTTP.
 */
export async function validate(services: Pick<Services, 'config' | 'db'> & { accounts: AccountsService }, base: string, token: string, viaHttps: boolean): Promise<CheckResult[]> {
  const cfg = services.config;
  const out: CheckResult[] = [];
  const add = (id: string, status: CheckStatus, evidence: Record<string, unknown>, remedy: string | null) => out.push({ id, title: CHECKS.find((c) => c.id === id)!.title, status, evidence, remedy });

  const s = cfg.auth.jwtSecret;
  if (s) {
    const weak = s.length < 32 || WELL_KNOWN.some((w) => s.toLowerCase().includes(w)) || new Set(s).size < 10;
    add('jwt_secret', weak ? 'fail' : 'pass', { source: 'config auth.jwtSecret', length: s.length, distinct_characters: new Set(s).size }, weak ? 'set JWT_SECRET to 32+ random characters' : null);
  } else {
    const file = path.join(cfg.dataDir, 'jwt-secret');
    add('jwt_secret', 'warn', { source: 'generated at first start', file, file_exists: fs.existsSync(file) }, 'set JWT_SECRET so that every host shares one managed secret');
  }

  if (!(await services.db('users').where({ email: cfg.auth.adminEmail }).first('id'))) add('admin_password_changed', 'pass', { admin_email: cfg.auth.adminEmail, account: 'absent' }, null);
  else if (!cfg.auth.adminPassword) add('admin_password_changed', 'pass', { admin_email: cfg.auth.adminEmail, configured_password: false }, null);
  else {
    const same = (await services.accounts.passwordMatches(cfg.auth.adminEmail, cfg.auth.adminPassword)) === true;
    add('admin_password_changed', same ? 'fail' : 'pass', { admin_email: cfg.auth.adminEmail, still_configured_password: same }, same ? 'change the admin password (POST /auth/password) and remove ADMIN_PASSWORD' : null);
  }

  add('https', viaHttps ? 'pass' : 'fail', { this_request_over_https: viaHttps }, viaHttps ? null : 'serve the API behind a TLS-terminating proxy that sets X-Forwarded-Proto: https');

  const limit = cfg.server.bodyLimit;
  add('body_limit', limit <= 10 * 1024 * 1024 ? 'pass' : 'fail', { bytes: limit }, limit <= 10 * 1024 * 1024 ? null : 'lower server.bodyLimit to 10 MiB or less');

  // One real answer of this host, as a browser on another site would get it.
  const res = await fetch(`${base}/stability/hardening/checklist`, { headers: { authorization: `Bearer ${token}`, origin: 'https://attacker.example' } });
  await res.arrayBuffer();
  const h = (n: string) => res.headers.get(n);
  const limited = h('x-ratelimit-limit');
  add('rate_limits', limited ? 'pass' : 'fail', { 'X-RateLimit-Limit': limited, 'X-RateLimit-Remaining': h('x-ratelimit-remaining') }, limited ? null : 'rate limits are off for this route');
  const acao = h('access-control-allow-origin');
  const openCors = acao === '*' || acao === 'https://attacker.example';
  add('cors', openCors ? 'fail' : 'pass', { request_origin: 'https://attacker.example', 'Access-Control-Allow-Origin': acao, 'Access-Control-Allow-Credentials': h('access-control-allow-credentials') }, openCors ? 'allow only the origins of your own front ends' : null);
  const headers = { 'X-Content-Type-Options': h('x-content-type-options'), 'X-Frame-Options': h('x-frame-options'), 'Content-Security-Policy': h('content-security-policy'), 'Referrer-Policy': h('referrer-policy'), 'Strict-Transport-Security': h('strict-transport-security') };
  const missing = [headers['X-Content-Type-Options'] === 'nosniff' ? null : 'X-Content-Type-Options: nosniff', headers['X-Frame-Options'] || /frame-ancestors/.test(headers['Content-Security-Policy'] ?? '') ? null : 'X-Frame-Options or CSP frame-ancestors', headers['Referrer-Policy'] ? null : 'Referrer-Policy'].filter(Boolean);
  add('security_headers', missing.length ? 'fail' : 'pass', { ...headers, missing }, missing.length ? `add ${missing.join(', ')} (at the proxy or the host)` : null);

  add('production_mode', cfg.env === 'production' ? 'pass' : 'warn', { env: cfg.env }, cfg.env === 'production' ? null : 'set NODE_ENV=production');
  const pg = isPostgres(services.db);
  add('database', pg ? 'pass' : 'warn', { engine: pg ? 'postgresql' : 'sqlite' }, pg ? null : 'use DATABASE_URL (PostgreSQL) to run more than one host');
  return out;
}
