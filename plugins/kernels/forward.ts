import type { Request, Response } from 'express';
import { bodyOrThrow } from '../../core/cluster/bus';
import type { PeerHost, Relayed, TaskForwarder } from '../../core/cluster/forward';
import { HttpError } from '../../core/errors';

/** Sends the task to `peer`; a peer that does not answer is 504 (timeout) or 503 (unreachable). */
export async function forwardTask(forwarder: TaskForwarder, peer: PeerHost, req: Request, body: unknown, requestId: string): Promise<Relayed> {
  try {
    return await forwarder.forward(peer, req, req.originalUrl, body, requestId);
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError') throw new HttpError(504, `Host ${peer.host_id}, which runs this kernel, did not answer in time`, {}, 'PEER_TIMEOUT');
    throw new HttpError(503, `Host ${peer.host_id}, which runs this kernel, cannot be reached: ${e.message}`, { 'Retry-After': '1' }, 'PEER_UNREACHABLE');
  }
}

interface TaskAnswer {
  domain: string;
  task: string;
  output: unknown;
  duration_ms: number;
}

/** The peer's answer as ours: its output, or its error with the same status, code, detail and Retry-After. */
export function relay(r: Relayed, res: Response): TaskAnswer {
  res.setHeader('X-Served-By', r.host_id);
  // A 2xx of a peer is the same route's answer (the response check still applies to it).
  return bodyOrThrow<TaskAnswer>(r, r.host_id, r.retryAfter ? { 'Retry-After': r.retryAfter } : {});
}
