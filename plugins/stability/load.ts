import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LoadJob, LoadResult } from './load-worker';

/** Runs a load job in a fresh worker thread; `signal` stops it (terminating the thread). */
export function runLoad(job: LoadJob, signal?: AbortSignal): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(path.join(__dirname, 'load-worker.js'), { workerData: job });
    const stop = () => void w.terminate();
    signal?.addEventListener('abort', stop, { once: true });
    let settled = false;
    w.once('message', (m: { ok: boolean; result?: LoadResult; error?: string }) => {
      settled = true;
      if (m.ok) resolve(m.result!);
      else reject(new Error(m.error));
      void w.terminate();
    });
    w.once('error', (err) => {
      settled = true;
      reject(err);
    });
    w.once('exit', () => {
      signal?.removeEventListener('abort', stop);
      if (!settled) reject(new Error(signal?.aborted ? 'cancelled' : 'the load worker exited'));
    });
  });
}
