import { z } from 'zod';
import { HttpError, invalid, NotFound } from '../../../core/errors';
import { coded, NotConfigured, StateConflict } from '../errors';
import { pageOf } from '../../../core/pagination';
import type { RouteDef, RouteMaker } from '../../../core/plugin';
import type { Deps } from '../deps';
import { certView, type CertRow } from '../certs/service';
import { certificate, certParams, gated, listQuery, provisionBody } from '../schemas';

/** A CA that refused or could not be reached: 502 with its reason. */
function issuerFailed(err: unknown): HttpError {
  return err instanceof HttpError ? err : coded(502, 'ISSUER_FAILED', `The certificate authority did not issue: ${(err as Error).message}`);
}

/** The Idempotency-Key header (1 to 200 visible characters), or null. */
export function idempotencyKey(v: string | string[] | undefined): string | null {
  if (v === undefined) return null;
  if (typeof v !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(v)) throw invalid(['header', 'Idempotency-Key'], '1 to 200 visible ASCII characters');
  return v;
}

export const certRoutes = (route: RouteMaker<Deps>): RouteDef<Deps>[] => [
  route({
    ...gated,
    method: 'post',
    path: '/automation/certificates/provision',
    summary: 'Issue an X.509 certificate for the names asked (local CA, or ACME with HTTP-01)',
    description: 'An Idempotency-Key header makes a retry answer the first result. issuer "acme" needs automation.acme.directoryUrl (503 NOT_CONFIGURED otherwise); a CA that refuses answers 502 and leaves a failed record.',
    access: 'operator',
    body: provisionBody,
    response: certificate,
    status: 201,
    errors: [422, 502, 503],
    handler: async ({ body, caller, services, req }) => {
      const a = services.automation;
      const names = [...new Set(body.names)];
      const key = idempotencyKey(req.headers['idempotency-key']);
      if (body.issuer === 'acme' && !a.certs.acme.configured) throw new NotConfigured('automation.acme.directoryUrl');
      try {
        return certView(await a.certs.provision(caller!, names, body.issuer, key), a.now());
      } catch (err) {
        throw issuerFailed(err);
      }
    },
  }),
  route({
    ...gated,
    method: 'post',
    path: '/automation/certificates/{cert_id}/renew',
    summary: 'Renew a certificate now: a new key and certificate for the same names from the same issuer',
    access: 'operator',
    params: certParams,
    response: certificate,
    errors: [404, 409, 422, 502, 503],
    handler: async ({ params, caller, services }) => {
      const a = services.automation;
      const row = await a.certs.get(caller!.tenantId, params.cert_id);
      if (row.state !== 'active') throw new StateConflict(row.state, [], `A ${row.state} certificate cannot be renewed; provision a new one`);
      try {
        return certView(await a.certs.renew(row, { source: 'manual', id: caller!.id }), a.now());
      } catch (err) {
        throw issuerFailed(err);
      }
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/certificates',
    summary: "The tenant's certificates, newest first (never their keys)",
    access: 'viewer',
    query: listQuery,
    response: z.object({ certificates: z.array(certificate), next_cursor: z.string().nullable() }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const a = services.automation;
      const page = await pageOf(services.db('automation_certificates').where({ tenant_id: caller!.tenantId }), query.limit, query.cursor);
      return { certificates: page.items.map((r) => certView(r as CertRow, a.now())), next_cursor: page.next_cursor };
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/certificates/expiring',
    summary: 'Active certificates that end within `days` days (soonest first)',
    access: 'viewer',
    query: z.object({ days: z.coerce.number().int().min(0).max(3650).default(30) }),
    response: z.object({ days: z.number().int(), until: z.string(), certificates: z.array(certificate) }),
    errors: [422],
    handler: async ({ query, caller, services }) => {
      const a = services.automation;
      const rows = await a.certs.expiring(caller!.tenantId, query.days);
      return { days: query.days, until: new Date(a.now().getTime() + query.days * 86400_000).toISOString(), certificates: rows.map((r) => certView(r, a.now())) };
    },
  }),
  route({
    ...gated,
    method: 'get',
    path: '/automation/certificates/{cert_id}',
    summary: 'One certificate: subject, names, issuer, serial, validity, fingerprint (never the key)',
    access: 'viewer',
    params: certParams,
    response: certificate,
    errors: [404, 422],
    handler: async ({ params, caller, services }) => {
      const a = services.automation;
      return certView(await a.certs.get(caller!.tenantId, params.cert_id), a.now());
    },
  }),
  route({
    method: 'get',
    path: '/.well-known/acme-challenge/{token}',
    summary: 'HTTP-01 challenge answers for the ACME CA (RFC 8555 §8.3)',
    access: 'public',
    params: z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{1,255}$/) }),
    produces: 'text/plain',
    errors: [404],
    handler: async ({ params, services, res }) => {
      const answer = await services.automation.certs.acme.challenge(params.token);
      if (!answer) throw new NotFound('No such challenge');
      res.status(200).type('text/plain').send(answer);
    },
  }),
];
