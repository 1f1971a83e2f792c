import { z } from 'zod';
import { jobViewFields } from '../../core/jobs';
import { Unavailable } from '../../core/errors';
import { pageOf } from '../../core/pagination';
import type { RouteDef, RouteMaker } from '../../core/plugin';
import { tenantScope } from '../../core/tenancy';
import type { Deps } from './deps';
import { JOB_STATES, toJob } from './jobs';

const price = z.object({ cpu_hour: z.string(), gpu_hour: z.string(), currency: z.string() }).nullable();
const provider = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.enum(['available', 'not_configured']),
  config_key: z.string().nullable(),
  regions: z.array(z.object({ id: z.string(), provider: z.string(), location: z.string().nullable(), residency: z.string().nullable() })),
  price,
});
const gpu = z.object({ id: z.string(), provider: z.string(), region: z.string(), index: z.number(), name: z.string(), memory_total_mb: z.number().nullable(), memory_used_mb: z.number().nullable(), utilization_pct: z.number().nullable(), temperature_c: z.number().nullable(), power_w: z.number().nullable() });
const allocation = z.object({ id: z.string(), tenant_id: z.string(), device_id: z.string(), provider: z.string(), region: z.string(), holder_kind: z.string(), holder_id: z.string(), workload_type: z.string().nullable(), created_at: z.string(), released_at: z.string().nullable() });
const providerQuery = z.object({ provider: z.string().min(1).max(32).default('local') });

export const jobOut = z.object({
  id: z.string(),
  tenant_id: z.string(),
  kind: z.string(),
  state: z.enum(JOB_STATES),
  input: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()).nullable(),
  ...jobViewFields,
});
const jobParams = z.object({ job_id: z.uuid() });

export function inventoryRoutes(route: RouteMaker<Deps>): RouteDef<Deps>[] {
  return [
    route({
      method: 'get',
      path: '/clouds',
      summary: 'Configured cloud providers: the local provider (this machine) and outside clouds from config, each with its regions, price and whether it is usable',
      access: 'viewer',
      feature: 'aiops',
      response: z.object({ providers: z.array(provider), next_cursor: z.null() }),
      handler: ({ services }) => ({ providers: services.compute.providers(), next_cursor: null }),
    }),
    route({
      method: 'get',
      path: '/gpus',
      summary: "A provider's GPUs as read (nvidia-smi on this machine; none without a GPU) and which workload holds which device",
      description: '503 NOT_CONFIGURED for an outside provider without credentials; 503 NO_PROVIDER_CLIENT for one with credentials (this build has no AWS/GCP/Azure API client).',
      access: 'viewer',
      feature: 'aiops',
      query: providerQuery,
      response: z.object({ provider: z.string(), gpus: z.array(gpu), allocations: z.array(allocation) }),
      errors: [404, 422, 503],
      handler: async ({ query, caller, services }) => {
        const gpus = await services.compute.gpus(query.provider);
        const allocs = (await services.compute.allocations(caller!.role === 'admin' ? null : caller!.tenantId)).filter((a) => a.provider === query.provider);
        return { provider: query.provider, gpus, allocations: allocs };
      },
    }),
    route({
      method: 'get',
      path: '/gpus/metrics',
      summary: 'Utilisation, memory, temperature and power of each GPU as read now, and the CPU metrics of the local provider (from /proc)',
      access: 'viewer',
      feature: 'aiops',
      query: providerQuery,
      response: z.object({
        provider: z.string(),
        gpus: z.array(gpu),
        cpu: z.object({ provider: z.string(), region: z.string(), model: z.string(), cores: z.number(), utilization_pct: z.number().nullable(), sample_ms: z.number(), load_average: z.array(z.number()), memory_total_bytes: z.number(), memory_available_bytes: z.number(), read_at: z.string() }).nullable(),
        method: z.string(),
      }),
      errors: [404, 422, 503],
      handler: async ({ query, services }) => {
        const gpus = await services.compute.gpus(query.provider);
        const cpu = query.provider === 'local' ? await services.compute.cpu() : null;
        return { provider: query.provider, gpus, cpu, method: 'nvidia-smi --query-gpu (when installed); CPU busy share from two reads of /proc/stat; MemAvailable from /proc/meminfo' };
      },
    }),
    route({
      method: 'post',
      path: '/gpus/benchmark',
      summary: 'Benchmark the compute of the local provider on a kernel worker (202): dense matrix multiply (GFLOP/s) and memory copy bandwidth',
      description: 'device cpu (the default) benchmarks the CPU on the compute kernel, with the GPU count seen. device gpu answers 503 GPU_BENCHMARK_UNAVAILABLE: this build has no GPU compute path (the kernels are Node.js workers without CUDA bindings), and the answer says whether a GPU was seen. Poll GET /uaicp/jobs/{job_id}; events uaicp_job.',
      access: 'operator',
      feature: 'aiops',
      body: z.object({ device: z.enum(['cpu', 'gpu']).default('cpu'), matrix_size: z.number().int().min(16).max(1024).default(256), repeats: z.number().int().min(1).max(20).default(3), memory_mb: z.number().int().min(1).max(512).default(64) }).default({ device: 'cpu', matrix_size: 256, repeats: 3, memory_mb: 64 }),
      response: jobOut,
      status: 202,
      errors: [422, 503],
      handler: async ({ body, caller, services }) => {
        if (body.device === 'gpu') {
          const seen = (await services.compute.gpus()).length;
          throw new Unavailable(`No GPU benchmark in this build: the kernels are Node.js worker threads without CUDA bindings (${seen ? `${seen} GPU(s) seen by nvidia-smi` : 'and no GPU on this machine'}); device cpu benchmarks the CPU`, undefined, 'GPU_BENCHMARK_UNAVAILABLE');
        }
        const job = await services.jobs.start(caller!.tenantId, caller!.id, 'benchmark', body, async (signal) => {
          const gpus = await services.compute.gpus();
          const figures = (await services.mesh.run('compute', 'cpu_benchmark', { matrix_size: body.matrix_size, repeats: body.repeats, memory_mb: body.memory_mb }, { signal, caller })) as Record<string, unknown>;
          return { ...figures, provider: 'local', region: services.config.compute.local.region, gpus_seen: gpus.length, note: gpus.length ? 'GPUs are present but this build has no GPU benchmark: the figures are the CPU’s' : 'no GPU on this machine: CPU benchmark' };
        });
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'start_benchmark', target_type: 'uaicp_job', target_id: job.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: body });
        return job;
      },
    }),
    route({
      method: 'get',
      path: '/jobs',
      summary: "The tenant's long /uaicp operations (benchmarks, optimisations, workflow runs), newest first (beyond the spec)",
      access: 'viewer',
      feature: 'aiops',
      query: z.object({ kind: z.enum(['benchmark', 'optimize', 'workflow']).optional(), limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().min(1).max(512).optional() }),
      response: z.object({ jobs: z.array(jobOut), next_cursor: z.string().nullable() }),
      errors: [422],
      handler: async ({ query, caller, services }) => {
        const q = tenantScope(services.db, caller!).select('uaicp_jobs');
        if (query.kind) q.where('kind', query.kind);
        const { items, next_cursor } = await pageOf(q, query.limit, query.cursor);
        return { jobs: items.map(toJob), next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/jobs/{job_id}',
      summary: 'One long /uaicp operation: state, input, result (beyond the spec: the poll of the 202 answers)',
      access: 'viewer',
      feature: 'aiops',
      params: jobParams,
      response: jobOut,
      errors: [404, 422],
      handler: async ({ params, caller, services }) => toJob(await tenantScope(services.db, caller!).get('uaicp_jobs', { id: params.job_id }, 'Job')),
    }),
  ];
}
