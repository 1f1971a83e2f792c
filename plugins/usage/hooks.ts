import type { Request, Response } from 'express';
import { Forbidden } from '../../core/errors';
import type { BeforeHook } from '../../core/http/pipeline';
import type { Mesh, TaskObservation } from '../../core/mesh/mesh';
import type { RouteDef } from '../../core/plugin';
import type { Caller } from '../../core/roles';
import type { Features } from './features';
import { latencyBucket, type Meter } from './meter';

/** The route group a request is metered under: the first segment of its declared path. */
export function routeGroup(fullPath: string | undefined): string {
  const parts = (fullPath ?? '').split('/').filter(Boolean);
  return parts[0] === 'api' ? (parts[1] ?? 'api') : (parts[0] ?? 'root');
}

function keyOf(caller: Caller): string | null {
  return caller.kind === 'api_key' ? caller.id : null;
}

/**
 * The pipeline hook of every route: meters the request of an authenticated caller (count,
 * 5xx, latency from here to the answer) when it finishes, and refuses a route whose
 * declared `feature` the caller's tenant does not have (403 PLAN_FEATURE).
 */
export function usageHook(meter: Meter, features: Features): BeforeHook {
  return (_req: Request, res: Response, route: RouteDef, caller: Caller | null) => {
    if (!caller) return;
    const start = performance.now();
    const group = routeGroup(route.fullPath);
    const tenantId = caller.tenantId;
    const keyId = keyOf(caller);
    res.once('finish', () => {
      const ms = performance.now() - start;
      meter.record({ tenantId, keyId, metric: 'requests', dimension: group, quantity: 1 });
      if (res.statusCode >= 500) meter.record({ tenantId, keyId, metric: 'request_errors', dimension: group, quantity: 1 });
      meter.record({ tenantId, keyId, metric: 'request_latency', dimension: latencyBucket(ms), quantity: 1 });
    });
    const feature = (route as RouteDef & { feature?: string }).feature;
    if (!feature) return;
    return features.has(tenantId, feature).then((ok) => {
      if (!ok) throw new Forbidden(`The "${feature}" feature is not part of this tenant's plan`, 'PLAN_FEATURE');
    });
  };
}

/** Meters every finished kernel task run for a tenant: count, failures and worker run time. */
export function watchTasks(mesh: Mesh, meter: Meter): () => void {
  const observer = (t: TaskObservation) => {
    if (!t.tenantId || t.outcome === 'aborted') return;
    const keyId = t.caller ? keyOf(t.caller) : null;
    meter.record({ tenantId: t.tenantId, keyId, metric: 'kernel_tasks', dimension: t.kernel, quantity: 1 });
    if (t.outcome === 'error') meter.record({ tenantId: t.tenantId, keyId, metric: 'kernel_task_errors', dimension: t.kernel, quantity: 1 });
    meter.record({ tenantId: t.tenantId, keyId, metric: 'kernel_cpu_ms', dimension: t.kernel, quantity: t.runMs });
  };
  mesh.taskObservers.push(observer);
  return () => {
    const i = mesh.taskObservers.indexOf(observer);
    if (i >= 0) mesh.taskObservers.splice(i, 1);
  };
}
