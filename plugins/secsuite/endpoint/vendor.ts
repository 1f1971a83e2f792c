import crypto from 'node:crypto';
import type { Config } from '../../../core/config';
import { probe } from '../probe';

export const VENDOR_URL_KEY = 'secsuite.endpointsec.vendorUrl';

export interface VendorResult {
  status: 'applied' | 'failed' | 'not_configured' | 'not_needed';
  config_key: string | null;
  detail: string | null;
}

function settings(config: Config): { url?: string; secret?: string } {
  const c = config.secsuite.endpointsec;
  return { url: c.vendorUrl, secret: c.vendorSecret };
}

export function vendorConfigured(config: Config): boolean {
  return !!settings(config).url;
}

/**
 * The endpoint vendor's side of a response, as a signed webhook (JSON body, `X-Signature:
 * sha256=<hex HMAC>` with `secsuite.endpointsec.vendorSecret`) to the vendor's forwarder at
 * `secsuite.endpointsec.vendorUrl`. Not configured: the platform side still applies and
 * the answer says so.
 */
export async function callVendor(config: Config, action: string, payload: Record<string, unknown>): Promise<VendorResult> {
  const { url, secret } = settings(config);
  if (!url) return { status: 'not_configured', config_key: VENDOR_URL_KEY, detail: `${VENDOR_URL_KEY} is not set` };
  const body = JSON.stringify({ action, ...payload });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers['x-signature'] = `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
    if (res.ok) return { status: 'applied', config_key: null, detail: `vendor answered ${res.status}` };
    return { status: 'failed', config_key: null, detail: `vendor answered ${res.status}` };
  } catch (err) {
    return { status: 'failed', config_key: null, detail: `vendor unreachable: ${(err as Error).message}` };
  }
}

/** Reachability for the health view. */
export async function probeVendor(config: Config): Promise<{ configured: boolean; reachable: boolean | null; latency_ms: number | null; detail: string }> {
  const { url } = settings(config);
  if (!url) return { configured: false, reachable: null, latency_ms: null, detail: `${VENDOR_URL_KEY} is not set` };
  return { configured: true, ...(await probe(url)) };
}
