import crypto from 'node:crypto';
import { z } from 'zod';
import type { Workflows } from '../../core/contracts/workflows';
import { Conflict, HttpError, invalid, NotFound, Unauthorized } from '../../core/errors';
import type { Caller } from '../../core/roles';
import type { Db } from '../../core/db';
import { upsertLead } from './store';

// The scheduling tool signs `<timestamp>.<raw body>` with HMAC-SHA256 and the shared secret
// (the scheme of Stripe and Cal.com-style tools): headers X-Scheduler-Timestamp (epoch
// seconds), X-Scheduler-Signature (`sha256=<hex>`), X-Scheduler-Delivery (unique id).
export const HEADERS = { timestamp: 'x-scheduler-timestamp', signature: 'x-scheduler-signature', delivery: 'x-scheduler-delivery' } as const;

export function sign(secret: string, timestamp: string, raw: string): string {
  return 'sha256=' + crypto.createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex');
}

/** 401 unless the signature is the secret's over this body and the timestamp is within tolerance. */
export function verify(secret: string, headers: Record<string, string | string[] | undefined>, raw: string | undefined, nowMs: number, toleranceSeconds: number): void {
  const ts = String(headers[HEADERS.timestamp] ?? '');
  const sig = String(headers[HEADERS.signature] ?? '');
  if (!/^\d{1,12}$/.test(ts)) throw new Unauthorized('missing or malformed X-Scheduler-Timestamp', 'BAD_SIGNATURE');
  if (Math.abs(nowMs / 1000 - Number(ts)) > toleranceSeconds) throw new Unauthorized(`the signed timestamp is more than ${toleranceSeconds} s from the server's clock`, 'STALE_TIMESTAMP');
  if (raw === undefined) throw new HttpError(415, 'the webhook body must be JSON');
  const want = Buffer.from(sign(secret, ts, raw));
  const got = Buffer.from(sig);
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) throw new Unauthorized('the signature does not match the body', 'BAD_SIGNATURE');
}

const booking = z.object({
  email: z.email().max(254),
  name: z.string().trim().max(200).optional(),
  company: z.string().trim().max(200).optional(),
  start_time: z.iso.datetime({ offset: true }),
});

export const schedulerPayload = z.discriminatedUnion('event', [
  z.object({ event: z.literal('booking.created'), data: booking }),
  z.object({ event: z.literal('booking.rescheduled'), data: booking }),
  z.object({ event: z.literal('booking.cancelled'), data: booking.pick({ email: true }) }),
  z.object({ event: z.literal('workflow.run'), data: z.object({ workflow_id: z.string().min(1).max(64) }) }),
]);
export type SchedulerPayload = z.output<typeof schedulerPayload>;

export const deliveryId = z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, 'letters, digits and . _ : -, at most 200');

/**
 * Records the delivery (its id is the replay guard: a second delivery of one id is 409 and
 * changes nothing) and applies its action to the lead of the address, in one transaction.
 */
export async function apply(db: Db, id: string, p: Exclude<SchedulerPayload, { event: 'workflow.run' }>, now: string): Promise<{ action: string; lead_id: string }> {
  const action = p.event === 'booking.cancelled' ? 'cancel_demo' : 'book_demo';
  try {
    return await db.transaction(async (trx) => {
      await trx('webhook_deliveries').insert({ id, source: 'scheduler', event: p.event, action, lead_id: null, received_at: now });
      const lead =
        p.event === 'booking.cancelled'
          ? await cancel(trx, p.data.email, now)
          : await upsertLead(trx, { email: p.data.email, name: p.data.name, company: p.data.company, source: 'scheduler', stage: 'demo_booked', demo_at: new Date(p.data.start_time).toISOString() }, now);
      await trx('webhook_deliveries').where({ id }).update({ lead_id: lead.id });
      return { action, lead_id: lead.id };
    });
  } catch (err) {
    throw replayed(err, id);
  }
}

function replayed(err: unknown, id: string): unknown {
  if (err instanceof HttpError) return err;
  if (/unique|duplicate|constraint/i.test((err as Error).message)) return new Conflict(`delivery ${id} was already received`, 'REPLAYED');
  return err;
}

/**
 * Starts a workflow of the configured tenant as the service identity `webhook:scheduler`
 * (role member, so the workflow's steps run with a member's rights). The delivery is stored
 * first as the replay guard; when the start is refused the row is removed again, so the tool's
 * retry is not taken for a replay.
 */
export async function runWorkflow(db: Db, workflows: Workflows, tenantId: string, id: string, workflowId: string, now: string): Promise<{ action: string; execution_id: string }> {
  const caller: Caller = { kind: 'user', id: 'webhook:scheduler', tenantId, role: 'member' };
  try {
    await workflows.definition(caller, workflowId);
  } catch (err) {
    if (err instanceof NotFound) throw invalid(['body', 'data', 'workflow_id'], `no workflow ${workflowId} in tenant ${tenantId}`);
    throw err;
  }
  try {
    await db('webhook_deliveries').insert({ id, source: 'scheduler', event: 'workflow.run', action: 'run_workflow', lead_id: null, received_at: now });
  } catch (err) {
    throw replayed(err, id);
  }
  try {
    const { execution } = await workflows.start(caller, workflowId);
    await db('webhook_deliveries').where({ id }).update({ execution_id: execution.id });
    return { action: 'run_workflow', execution_id: execution.id };
  } catch (err) {
    await db('webhook_deliveries').where({ id }).delete();
    throw err;
  }
}

async function cancel(db: Db, email: string, now: string) {
  const found = await db('leads').where({ email: email.toLowerCase() }).first();
  if (!found) throw invalid(['body', 'data', 'email'], 'no lead has a demo booked with this address');
  await db('leads').where({ id: found.id }).update({ stage: 'demo_cancelled', demo_at: null, updated_at: now });
  return { id: found.id as string };
}
