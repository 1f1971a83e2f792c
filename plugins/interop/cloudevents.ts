import { CloudEvent } from 'cloudevents';
import type { ActionRecord } from '../../core/actions';
import type { BusEvent } from '../../core/events';
import { STREAM_MESSAGES } from './asyncapi';

export const SOURCE = '/platform-control';
export const typeOf = (eventType: string) => `com.platform-control.${eventType}`;

/** The CloudEvents types we emit: one per stream message that carries an event of the bus. */
export function catalogue(): Array<{ type: string; stream_type: string; description: string }> {
  return Object.entries(STREAM_MESSAGES)
    .filter(([name]) => !['snapshot', 'subscribed', 'pong', 'error'].includes(name))
    .map(([name, m]) => ({ type: typeOf(name), stream_type: name, description: m.summary }));
}

/**
 * A recorded action as a CloudEvent 1.0 in structured JSON mode; the SDK's validate() checks
 * the required attributes and their formats (it throws a ValidationError otherwise).
 */
export function actionEvent(a: ActionRecord): Record<string, unknown> {
  const e = new CloudEvent({
    specversion: '1.0',
    id: a.id,
    source: `${SOURCE}/actions`,
    type: typeOf('action_taken'),
    time: a.created_at,
    subject: `${a.target_type}/${a.target_id}`,
    datacontenttype: 'application/json',
    data: a,
  });
  e.validate();
  return JSON.parse(JSON.stringify(e)) as Record<string, unknown>;
}

/**
 * A bus event (what /ops/stream sends) as a CloudEvent in structured JSON mode. The subject is
 * the object the event is about, when its data names one.
 */
export function streamEvent(e: BusEvent, id: string): Record<string, unknown> {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const subject = ['execution_id', 'incident_id', 'node_id', 'kernel_id', 'id'].map((k) => d[k]).find((v) => typeof v === 'string') as string | undefined;
  const ce = new CloudEvent({ specversion: '1.0', id, source: `${SOURCE}/stream`, type: typeOf(e.type), time: e.timestamp, datacontenttype: 'application/json', data: e.data, ...(subject ? { subject } : {}) });
  ce.validate();
  return JSON.parse(JSON.stringify(ce)) as Record<string, unknown>;
}
