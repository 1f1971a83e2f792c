import crypto from 'node:crypto';
import { z } from 'zod';
import { StateConflict, Unprocessable } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import { checkDataset, countRows, MIN_ROWS } from './dataset';
import type { Deps } from './deps';
import { job, jobBody, page } from './schemas';
import { JOB_FINISHED, JOB_STATES } from './store';
import { toJob, type Job } from './training';

const jobParams = z.object({ job_id: z.uuid() });

export function jobRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'post',
      path: '/training/jobs',
      summary: 'Train a linear or logistic model on data the platform holds (llm-call telemetry or kernel task outcomes), on the compute kernel',
      description: '202 with the job (queued → running → succeeded | failed | cancelled, events training_job and training_progress). Metrics per epoch; on success the model is registered as the next version of model_name. 422 INSUFFICIENT_DATA with fewer than 10 rows.',
      access: 'member',
      feature: 'aiops',
      body: jobBody,
      response: job,
      status: 202,
      errors: [422],
      handler: async ({ body, caller, services }) => {
        checkDataset(body.dataset, body.kind);
        const rows = await countRows(services.db, caller!.tenantId, body.dataset);
        if (rows < MIN_ROWS) throw new Unprocessable([{ loc: ['body', 'dataset'], msg: `the dataset has ${rows} rows; training needs at least ${MIN_ROWS}`, type: 'insufficient_data' }], 'INSUFFICIENT_DATA');
        const now = services.clock.now().toISOString();
        const { model_name, kind, ...spec } = body;
        const row = { id: crypto.randomUUID(), model_name, kind, state: 'queued', spec: JSON.stringify({ kind, ...spec }), epochs_done: 0, metrics: '[]', result: null, model_id: null, error: null, created_by: caller!.id, created_at: now, started_at: null, finished_at: null };
        await tenantScope(services.db, caller!).insert('aiops_training_jobs', row);
        const j: Job = toJob({ ...row, tenant_id: caller!.tenantId });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_training_job', target_type: 'training_job', target_id: j.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { model_name, kind, rows } });
        services.events.publish('training_job', { job_id: j.id, tenant_id: j.tenant_id, model_name, state: 'queued', previous: null, epochs_done: 0, error: null, model_id: null });
        const answer = structuredClone(j);
        services.trainer.start(j, caller!);
        return answer;
      },
    }),
    route({
      method: 'get',
      path: '/training/jobs',
      summary: "The tenant's training jobs, newest first; filter by state",
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ state: z.enum(JOB_STATES).optional(), ...page }),
      response: z.object({ jobs: z.array(job), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = tenantScope(services.db, caller!).select('aiops_training_jobs');
        if (query.state) q.where('state', query.state);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { jobs: items.map(toJob), next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/training/jobs/{job_id}',
      summary: 'One training job: state, progress, metrics per epoch, result and the registered model',
      access: 'viewer',
      feature: 'aiops',
      params: jobParams,
      response: job,
      errors: [404, 422],
      handler: async ({ params, caller, services }) => toJob(await tenantScope(services.db, caller!).get('aiops_training_jobs', { id: params.job_id }, 'Training job')),
    }),
    route({
      method: 'post',
      path: '/training/jobs/{job_id}/cancel',
      summary: 'Cancel a queued or running job (beyond the spec): its running task is aborted on its worker',
      access: 'member',
      feature: 'aiops',
      params: jobParams,
      response: job,
      errors: [404, 409, 422],
      handler: async ({ params, caller, services }) => {
        const scope = tenantScope(services.db, caller!);
        const get = async () => toJob(await scope.get('aiops_training_jobs', { id: params.job_id }, 'Training job'));
        const j = await get();
        if (JOB_FINISHED.includes(j.state)) throw new StateConflict(j.state, [], `Training job ${j.id} is ${j.state}; only queued or running jobs can be cancelled`);
        if (!(await services.trainer.cancel(j.id))) {
          // Not run by this host: mark it cancelled in storage.
          await services.db('aiops_training_jobs').where({ id: j.id }).whereIn('state', ['queued', 'running']).update({ state: 'cancelled', error: 'cancelled by request', finished_at: services.clock.now().toISOString() });
        }
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'cancel_training_job', target_type: 'training_job', target_id: j.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: {} });
        return get();
      },
    }),
  ];
}
