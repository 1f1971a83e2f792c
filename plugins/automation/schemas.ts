import { z } from 'zod';

/** The plan feature every /automation route needs (core's plan gate reads it). */
export const gated = { feature: 'automation' } as const;

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(500).optional(),
});

const dnsName = z
  .string()
  .max(253)
  .regex(/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$|^\d{1,3}(\.\d{1,3}){3}$/, 'a lowercase DNS name or an IPv4 address');

export const provisionBody = z.object({
  names: z.array(dnsName).min(1).max(100),
  /** local: the service's own CA; acme: the ACME CA of automation.acme.directoryUrl. */
  issuer: z.enum(['local', 'acme']).default('local'),
});

export const certificate = z.object({
  id: z.string(),
  tenant_id: z.string(),
  names: z.array(z.string()),
  issuer_kind: z.enum(['local', 'acme']),
  state: z.enum(['issuing', 'active', 'failed']),
  subject: z.string().nullable(),
  subject_alt_names: z.array(z.string()),
  issuer: z.string().nullable(),
  serial: z.string().nullable(),
  not_before: z.string().nullable(),
  not_after: z.string().nullable(),
  days_left: z.number().nullable(),
  fingerprint_sha256: z.string().nullable(),
  certificate_pem: z.string().nullable(),
  chain_pem: z.string().nullable(),
  renewals: z.number().int(),
  renewed_at: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const certParams = z.object({ cert_id: z.uuid() });

export const tlsTarget = z.object({
  host: z.string().min(1).max(253).regex(/^[A-Za-z0-9.:-]+$/, 'a host name or address'),
  port: z.number().int().min(1).max(65535),
  servername: z.string().min(1).max(253).nullable().default(null),
});

export const verifyResult = z.object({
  host: z.string(),
  port: z.number(),
  servername: z.string().nullable(),
  ok: z.boolean(),
  authorized: z.boolean(),
  authorization_error: z.string().nullable(),
  protocol: z.string().nullable(),
  cipher: z.string().nullable(),
  handshake_ms: z.number().nullable(),
  names: z.array(z.string()),
  days_left: z.number().nullable(),
  chain: z.array(z.object({ subject: z.string(), issuer: z.string(), serial: z.string(), not_before: z.string(), not_after: z.string(), fingerprint_sha256: z.string() })),
  error: z.string().nullable(),
});

export const listenerStatus = z.object({
  running: z.boolean(),
  port: z.number().nullable(),
  started_at: z.string().nullable(),
  certificate_id: z.string().nullable(),
  handshakes: z.number().int(),
  failures: z.number().int(),
  reloads: z.number().int(),
  last_failure: z.string().nullable(),
});

export const jsonObject = z.record(z.string(), z.unknown());
