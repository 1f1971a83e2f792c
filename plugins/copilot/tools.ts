// The copilot's tools: the platform's own operations, each run with the caller's identity and
// refused when the caller's role is below the one the same operation needs through the API.
import { z } from 'zod';
import type { Config } from '../../core/config';
import type { Db } from '../../core/db';
import { errorText, NotFound } from '../../core/errors';
import type { Mesh } from '../../core/mesh/mesh';
import { roleAtLeast, type Caller, type Role } from '../../core/roles';
import type { KpiService } from '../../core/contracts/insights';
import type { Workflows } from '../../core/contracts/workflows';

export interface ToolContext {
  db: Db;
  mesh: Mesh;
  config: Config;
  kpis: KpiService;
  workflows: Workflows;
}

export interface Tool {
  name: string;
  description: string;
  role: Role;
  /** Changes the platform: asks for confirmation first. */
  mutating: boolean;
  params: z.ZodObject;
  run(ctx: ToolContext, caller: Caller, args: Record<string, any>): Promise<unknown>;
  /** What the answer says about the result. */
  say(result: any, args: Record<string, any>): string;
  /** A KPI the result is (for insight chains that can be replayed), else null. */
  metric?(args: Record<string, any>, result: any): { metric: string; params: Record<string, unknown>; value: number | null } | null;
}

const nodeArgs = z.object({ node_id: z.string().min(1).max(96) });
const actor = (c: Caller) => ({ source: 'manual' as const, actor: c.id, cause: 'copilot' });

export const TOOLS: Tool[] = [
  {
    name: 'list_kernels',
    description: 'List the kernels with their state, health, nodes and circuit breaker',
    role: 'viewer',
    mutating: false,
    params: z.object({}),
    run: async (ctx) => ctx.mesh.kernels().map((k) => ({ id: k.id, state: k.state, health: k.health, nodes: k.nodes.map((n) => ({ id: n.id, state: n.state, health: n.health })), breaker: k.breaker.state })),
    say: (r: Array<{ id: string; state: string; health: string; nodes: unknown[] }>) => (r.length ? `${r.length} kernel(s): ${r.map((k) => `${k.id} (${k.state}, ${k.health}, ${k.nodes.length} node(s))`).join('; ')}.` : 'No kernels are loaded.'),
  },
  {
    name: 'node_state',
    description: "Show a mesh node's state, health, in-flight tasks and drain progress",
    role: 'viewer',
    mutating: false,
    params: nodeArgs,
    run: async (ctx, _c, a) => {
      const n = ctx.mesh.node(a.node_id);
      return { id: n.id, kernel_id: n.kernel_id, state: n.state, health: n.health, reason: n.reason, threads: n.threads, in_flight: n.in_flight, tasks_run: n.tasks_run, tasks_failed: n.tasks_failed, drain: n.drain };
    },
    say: (n) => `Node ${n.id} of ${n.kernel_id} is ${n.state} and ${n.health} (${n.reason}); ${n.in_flight} task(s) in flight, ${n.tasks_run} run, ${n.tasks_failed} failed.`,
  },
  {
    name: 'drain_node',
    description: 'Drain a mesh node: it takes no new tasks, finishes the ones in flight, then its threads end',
    role: 'operator',
    mutating: true,
    params: nodeArgs.extend({ deadline_seconds: z.number().int().min(1).max(86_400).optional() }),
    run: (ctx, c, a) => ctx.mesh.drainNode(a.node_id, { deadline_seconds: a.deadline_seconds }, actor(c)),
    say: (s, a) => `Node ${a.node_id} is ${s.state}: ${s.in_flight} task(s) in flight, progress ${Math.round(s.progress * 100)}%.`,
  },
  {
    name: 'pause_node',
    description: 'Pause a mesh node: no new tasks, in-flight ones go on',
    role: 'operator',
    mutating: true,
    params: nodeArgs,
    run: (ctx, c, a) => ctx.mesh.pauseNode(a.node_id, actor(c)),
    say: (n) => `Node ${n.id} is ${n.state}.`,
  },
  {
    name: 'resume_node',
    description: 'Resume a paused or drained mesh node',
    role: 'operator',
    mutating: true,
    params: nodeArgs,
    run: (ctx, c, a) => ctx.mesh.resumeNode(a.node_id, actor(c)),
    say: (n) => `Node ${n.id} is ${n.state}.`,
  },
  {
    name: 'open_incidents',
    description: "List the tenant's open or mitigated incidents (and the platform's)",
    role: 'viewer',
    mutating: false,
    params: z.object({}),
    run: async (ctx, c) => ctx.db('incidents').where((q) => q.where('tenant_id', c.tenantId).orWhereNull('tenant_id')).whereIn('state', ['open', 'mitigated']).orderBy('created_at', 'desc').limit(50).select('id', 'title', 'severity', 'state', 'kernel_id', 'created_at'),
    say: (r: Array<{ title: string; severity: string; state: string }>) => (r.length ? `${r.length} open incident(s): ${r.map((i) => `${i.title} (${i.severity}, ${i.state})`).join('; ')}.` : 'There are no open incidents.'),
    metric: (_a, r: unknown[]) => ({ metric: 'open_incidents', params: {}, value: r.length }),
  },
  {
    name: 'slo_burn',
    description: "Error-budget burn rate and error rate of one kernel (or every kernel) over its SLO window",
    role: 'viewer',
    mutating: false,
    params: z.object({ kernel: z.string().max(64).optional() }),
    run: async (ctx, c, a) => {
      const ids = a.kernel ? [ctx.mesh.kernel(a.kernel).id] : [...ctx.mesh.kernelMap.keys()].sort();
      const out = [];
      for (const id of ids) {
        const window_seconds = (ctx.config.slo.domains[id] ?? ctx.config.slo.default).windowSeconds;
        const burn = await ctx.kpis.measure(c.tenantId, 'kernel_slo_burn_rate', { kernel: id, window_seconds });
        const err = await ctx.kpis.measure(c.tenantId, 'kernel_error_rate', { kernel: id, window_seconds });
        out.push({ kernel: id, window_seconds, burn_rate: burn.value, error_rate: err.value });
      }
      return out;
    },
    say: (r: Array<{ kernel: string; burn_rate: number | null; error_rate: number | null }>) => r.map((k) => (k.burn_rate === null ? `${k.kernel}: no tasks in the window` : `${k.kernel}: burn rate ${k.burn_rate} (error rate ${k.error_rate})`)).join('; ') + '.',
    metric: (a, r: Array<{ kernel: string; window_seconds: number; burn_rate: number | null }>) => (a.kernel && r[0] ? { metric: 'kernel_slo_burn_rate', params: { kernel: r[0].kernel, window_seconds: r[0].window_seconds }, value: r[0].burn_rate } : null),
  },
  {
    name: 'costs',
    description: "The tenant's LLM cost (telemetry cost_usd) over a window, in total and by model",
    role: 'viewer',
    mutating: false,
    params: z.object({ window_seconds: z.number().int().min(60).max(90 * 86400).default(30 * 86400) }),
    run: async (ctx, c, a) => {
      const total = await ctx.kpis.measure(c.tenantId, 'cost_usd', { window_seconds: a.window_seconds });
      const rows = (await ctx.db('telemetry_events').where('tenant_id', c.tenantId).andWhere('ts', '>=', total.window!.since).whereNotNull('cost_usd').groupBy('model').select('model').sum({ usd: 'cost_usd' })) as Array<{ model: string | null; usd: unknown }>;
      return { window: total.window, total_usd: total.value ?? 0, by_model: rows.map((r) => ({ model: r.model ?? 'unknown', usd: Number(r.usd) })).sort((x, y) => y.usd - x.usd) };
    },
    say: (r) => `Cost since ${r.window.since}: $${r.total_usd.toFixed(4)}${r.by_model.length ? ` (${r.by_model.map((m: { model: string; usd: number }) => `${m.model} $${m.usd.toFixed(4)}`).join(', ')})` : ''}.`,
    metric: (a, r) => ({ metric: 'cost_usd', params: { window_seconds: a.window_seconds }, value: r.total_usd }),
  },
  {
    name: 'run_workflow',
    description: 'Start a run of one of the tenant\'s workflows, by name or id',
    role: 'member',
    mutating: true,
    params: z.object({ workflow: z.string().min(1).max(200) }),
    run: async (ctx, c, a) => {
      const row = await ctx.db('workflow_definitions').where('tenant_id', c.tenantId).andWhere((q) => q.where('id', a.workflow).orWhere('name', a.workflow)).orderBy('created_at', 'desc').first();
      if (!row) throw new NotFound(`No workflow named "${a.workflow}"`);
      const { execution } = await ctx.workflows.start(c, row.id);
      return { execution_id: execution.id, workflow_id: row.id, workflow_name: row.name, state: execution.state };
    },
    say: (r) => `Started workflow "${r.workflow_name}": execution ${r.execution_id} (poll /ops/workflows/${r.execution_id}).`,
  },
];

export const toolByName = new Map(TOOLS.map((t) => [t.name, t]));

export interface StepResult {
  tool: string;
  args: Record<string, unknown>;
  status: 'ok' | 'forbidden' | 'needs_confirmation' | 'error';
  result: unknown;
  error: string | null;
  said: string;
}

/** Runs a tool as the caller: role first, then its parameters, then the operation. */
export async function runTool(ctx: ToolContext, caller: Caller, name: string, rawArgs: unknown, confirmed: boolean): Promise<StepResult> {
  const tool = toolByName.get(name);
  const args = (rawArgs && typeof rawArgs === 'object' ? rawArgs : {}) as Record<string, unknown>;
  if (!tool) return { tool: name, args, status: 'error', result: null, error: `unknown tool ${name}`, said: `I have no tool called ${name}.` };
  if (!roleAtLeast(caller.role, tool.role)) {
    return { tool: name, args, status: 'forbidden', result: null, error: `needs role ${tool.role}; you are ${caller.role}`, said: `I can't do that for you: ${name.replace(/_/g, ' ')} needs the ${tool.role} role and you are a ${caller.role}.` };
  }
  const parsed = tool.params.safeParse(args);
  if (!parsed.success) return { tool: name, args, status: 'error', result: null, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), said: `The request for ${name} is incomplete: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'} ${i.message}`).join('; ')}.` };
  if (tool.mutating && !confirmed) {
    return { tool: name, args: parsed.data, status: 'needs_confirmation', result: null, error: null, said: `This will ${tool.description.charAt(0).toLowerCase()}${tool.description.slice(1)} (${name} ${JSON.stringify(parsed.data)}). Reply "confirm" to go ahead, or send the request again with "confirm": true.` };
  }
  try {
    const result = await tool.run(ctx, caller, parsed.data);
    return { tool: name, args: parsed.data, status: 'ok', result, error: null, said: tool.say(result, parsed.data) };
  } catch (err) {
    const msg = errorText(err);
    return { tool: name, args: parsed.data, status: 'error', result: null, error: msg, said: `${name} did not succeed: ${msg}` };
  }
}
