import { z } from 'zod';
import { SEVERITIES } from '../../../core/contracts/security';

export const severity = z.enum(SEVERITIES);
const iso = z.iso.datetime({ offset: true });
const id = z.string().min(1).max(128).regex(/^[A-Za-z0-9._:@-]+$/, 'letters, digits and . _ : @ - only');

export const indicatorsIn = z.object({
  hashes: z.array(z.string().regex(/^[0-9a-fA-F]{32,128}$/, 'a hex digest')).max(100).default([]),
  ips: z.array(z.string().min(2).max(64)).max(100).default([]),
  domains: z.array(z.string().min(1).max(253)).max(100).default([]),
  urls: z.array(z.string().url().max(2048)).max(100).default([]),
});

const base = {
  source: z.string().min(1).max(128).default('agent'),
  device_id: id.optional(),
  hostname: z.string().min(1).max(256).optional(),
  address: z.string().min(2).max(64).optional(),
  type: z.string().min(1).max(64),
  severity: severity.default('info'),
  occurred_at: iso.optional(),
  indicators: indicatorsIn.prefault({}),
  data: z.record(z.string(), z.unknown()).default({}),
};

export const endpointEvent = z.object({ ...base, device_id: id });
export const detection = z.object({ ...base, device_id: id, severity: severity.default('medium') });
export const identityEvent = z.object({ ...base, identity: z.string().min(1).max(320) });

export const batchOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item).min(1).max(1000) });

export const ingestResponse = z.object({
  accepted: z.number().int(),
  ids: z.array(z.string()),
  refused: z.array(z.object({ index: z.number().int(), device_id: z.string().nullable(), code: z.string(), detail: z.string() })),
  intel_matches: z.number().int(),
});

export const record = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.enum(['event', 'detection', 'identity']),
  source: z.string(),
  device_id: z.string().nullable(),
  identity: z.string().nullable(),
  type: z.string(),
  severity,
  occurred_at: z.string(),
  indicators: z.object({ hashes: z.array(z.string()), ips: z.array(z.string()), domains: z.array(z.string()), urls: z.array(z.string()) }),
  data: z.record(z.string(), z.unknown()),
  intel_matches: z.number().int(),
  created_at: z.string(),
});

export const recordsQuery = z.object({
  device_id: z.string().max(128).optional(),
  severity: severity.optional(),
  type: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(500).optional(),
});

export const device = z.object({
  device_id: z.string(),
  hostname: z.string().nullable(),
  address: z.string().nullable(),
  containment: z.enum(['normal', 'contained']),
  last_seen_at: z.string().nullable(),
  updated_at: z.string(),
});

export const vendorResult = z.object({ status: z.enum(['applied', 'failed', 'not_configured', 'not_needed']), config_key: z.string().nullable(), detail: z.string().nullable() });

export const containBody = z.object({ device_id: id, reason: z.string().max(500).optional(), require_vendor: z.boolean().default(false) });
export const containResponse = z.object({ device, action_id: z.string(), vendor: vendorResult });

export const disableBody = z.object({ identity: z.string().min(1).max(320), reason: z.string().max(500).optional() });
export const disableResponse = z.object({ identity: z.string(), platform_user: z.boolean(), action_id: z.string().nullable(), vendor: vendorResult });

export const keyBody = z.object({ name: z.string().min(1).max(128) });
export const keyResponse = z.object({ id: z.string(), name: z.string(), key: z.string(), hint: z.string(), created_at: z.string() });

export const indicatorLoad = z.object({
  source: z.string().min(1).max(128).default('api'),
  indicators: z.array(z.object({ type: z.enum(['hash', 'ip', 'domain', 'url']), value: z.string().min(1).max(2048), name: z.string().max(256).optional(), labels: z.array(z.string().max(64)).max(20).default([]) })).max(10_000).default([]),
  stix_bundle: z.record(z.string(), z.unknown()).optional(),
});
export const indicatorLoadResponse = z.object({ loaded: z.number().int(), skipped: z.array(z.object({ id: z.string(), reason: z.string() })) });

export const matchResponse = z.object({
  detection_id: z.string(),
  checked: z.number().int(),
  matches: z.array(z.object({ type: z.string(), value: z.string(), indicator_id: z.string(), source: z.string(), name: z.string().nullable(), stix_id: z.string().nullable(), matched_by: z.string() })),
  method: z.string(),
});

export const predictBody = z.object({ window_days: z.number().int().min(1).max(365).default(30), half_life_days: z.number().min(0.5).max(90).default(7) });
export const predictResponse = z.object({
  devices: z.array(z.object({ device_id: z.string(), risk: z.number(), detections: z.number().int(), intel_matches: z.number().int(), last_detection_at: z.string(), containment: z.string() })),
  method: z.string(),
  window: z.object({ from: z.string(), to: z.string() }),
  inputs: z.object({ detections: z.number().int(), half_life_days: z.number(), weights: z.record(z.string(), z.number()) }),
});

export const idParams = z.object({ id: z.string().min(1).max(64) });
