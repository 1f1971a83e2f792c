import { openStream, type SocketConstructor } from '@platform-control/client';
import { Command } from 'commander';
import WebSocket from 'ws';
import { call, contextOf, intOption, pages, type Ctx } from '../context';
import { CliError, EXIT } from '../errors';
import { fields, json, out, Progress, table } from '../output';

type Health = 'healthy' | 'degraded' | 'unhealthy' | 'unknown';
type NodeState = 'active' | 'paused' | 'draining' | 'drained';

const nodeColumns = [
  { header: 'NODE', value: (n: NodeView) => n.id },
  { header: 'KERNEL', value: (n: NodeView) => n.kernel_id },
  { header: 'STATE', value: (n: NodeView) => n.state },
  { header: 'HEALTH', value: (n: NodeView) => n.health },
  { header: 'THREADS', value: (n: NodeView) => n.threads },
  { header: 'IN-FLIGHT', value: (n: NodeView) => n.in_flight },
  { header: 'RUN', value: (n: NodeView) => n.tasks_run },
  { header: 'FAILED', value: (n: NodeView) => n.tasks_failed },
];

interface NodeView {
  id: string;
  kernel_id: string;
  state: string;
  health: string;
  threads: number;
  in_flight: number;
  tasks_run: number;
  tasks_failed: number;
}

function showNode(ctx: Ctx, n: NodeView & Record<string, unknown>): void {
  if (ctx.format === 'json') return json(n);
  out(fields(n, ['id', 'kernel_id', 'domain', 'state', 'state_since', 'health', 'reason', 'threads', 'in_flight', 'queued', 'tasks_run', 'tasks_failed', 'drain']));
}

export function kernelsCommand(): Command {
  const kernels = new Command('kernels').description('kernel domains');
  kernels
    .command('ls')
    .description('list kernels with state, health, breaker and nodes')
    .option('--all', 'every page')
    .action(async (o: { all?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const rows = await pages(Boolean(o.all), async (cursor) => {
        const d = await call(ctx.client.GET('/kernels/', { params: { query: { cursor } } }));
        return { items: d.kernels, next: d.next_cursor };
      });
      if (ctx.format === 'json') return json(rows);
      out(
        table(rows, [
          { header: 'KERNEL', value: (k) => k.id },
          { header: 'STATE', value: (k) => k.state },
          { header: 'HEALTH', value: (k) => k.health },
          { header: 'BREAKER', value: (k) => k.breaker.state + (k.breaker.isolated ? ' (isolated)' : '') },
          { header: 'NODES', value: (k) => Object.entries(k.nodes_by_state).map(([s, n]) => `${s}=${n}`).join(' ') || '0' },
          { header: 'TASKS', value: (k) => k.tasks.length },
        ]),
      );
    });
  return kernels;
}

export function nodesCommand(): Command {
  const nodes = new Command('nodes').description('nodes of the mesh: list, inspect, pause, resume, drain');
  nodes
    .command('ls')
    .description('list nodes')
    .option('--kernel <kernel_id>', 'only this kernel')
    .option('--state <state>', 'active, paused, draining or drained')
    .option('--health <health>', 'healthy, degraded, unhealthy or unknown')
    .option('--all', 'every page')
    .action(async (o: { kernel?: string; state?: string; health?: string; all?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const rows = await pages(Boolean(o.all), async (cursor) => {
        const query = { kernel_id: o.kernel, state: o.state as NodeState | undefined, health: o.health as Health | undefined, cursor };
        const d = await call(ctx.client.GET('/mesh/nodes', { params: { query } }));
        return { items: d.nodes, next: d.next_cursor };
      });
      if (ctx.format === 'json') return json(rows);
      out(table(rows, nodeColumns));
    });
  nodes
    .command('show <node_id>')
    .description("one node: state, health with its reason, counters, drain")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      showNode(ctx, await call(ctx.client.GET('/mesh/nodes/{node_id}', { params: { path: { node_id: id } } })));
    });
  for (const verb of ['pause', 'resume'] as const) {
    nodes
      .command(`${verb} <node_id>`)
      .description(verb === 'pause' ? 'stop giving the node new tasks (tasks in flight go on)' : 'let a paused or drained node take tasks again')
      .action(async (id: string, _o: unknown, cmd: Command) => {
        const ctx = contextOf(cmd);
        const path = verb === 'pause' ? '/mesh/nodes/{node_id}/pause' : '/mesh/nodes/{node_id}/resume';
        showNode(ctx, await call(ctx.client.POST(path, { params: { path: { node_id: id } } })));
      });
  }
  nodes
    .command('drain <node_id>')
    .description('drain a node: no new tasks, tasks in flight finish (--force: aborted at the deadline)')
    .option('--deadline <seconds>', 'seconds the tasks in flight have', intOption('--deadline'))
    .option('--force', 'abort what is still running at the deadline')
    .option('--wait', 'wait until the node is drained (progress on a terminal)')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 1)', intOption('--timeout'), 600)
    .action(async (id: string, o: { deadline?: number; force?: boolean; wait?: boolean; timeout: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const body = { deadline_seconds: o.deadline, force: o.force };
      if (!o.wait) {
        const status = await call(ctx.client.POST('/mesh/nodes/{node_id}/drain', { params: { path: { node_id: id } }, body }));
        return ctx.format === 'json' ? json(status) : out(fields(status));
      }
      const final = await drainAndWait(ctx, id, body, o.timeout);
      if (ctx.format === 'json') json(final);
      else out(fields(final));
      if (final.state !== 'drained') throw new CliError(EXIT.failed, `node ${id} not drained after ${o.timeout} s (state ${final.state}, ${final.in_flight} in flight)`);
    });
  nodes
    .command('drain-status <node_id>')
    .description("a node's drain: state, deadline, in flight, completed, progress")
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const status = await call(ctx.client.GET('/mesh/nodes/{node_id}/drain/status', { params: { path: { node_id: id } } }));
      if (ctx.format === 'json') return json(status);
      out(fields(status));
    });
  return nodes;
}

/**
 * Starts a drain and follows it on /ops/stream (drain_progress, node_state) until the node is
 * drained or the timeout passes. The stream is subscribed before the drain starts, so no
 * change between the two is missed; the final figures are read from drain/status.
 */
async function drainAndWait(ctx: Ctx, id: string, body: { deadline_seconds?: number; force?: boolean }, timeoutS: number) {
  const stream = openStream({ baseUrl: ctx.url, token: ctx.token, types: ['drain_progress', 'node_state'], WebSocket: WebSocket as unknown as SocketConstructor });
  const progress = new Progress();
  try {
    const subscribed = stream.next('subscribed');
    await stream.opened.catch(() => {
      throw new CliError(EXIT.server, 'cannot open /ops/stream to follow the drain');
    });
    await subscribed;
    stream.on('drain_progress', (m) => {
      if (m.data.node_id === id) progress.update(m.data.progress, `${m.data.in_flight} in flight, ${m.data.completed} completed${m.data.overdue ? ', overdue' : ''}`);
    });
    const drained = stream.next('node_state', (m) => m.data.node_id === id && m.data.state === 'drained', timeoutS * 1000);
    drained.catch(() => undefined);
    const started = await call(ctx.client.POST('/mesh/nodes/{node_id}/drain', { params: { path: { node_id: id } }, body }));
    progress.update(started.progress, `${started.in_flight} in flight`);
    if (started.state !== 'drained') await drained.catch(() => undefined);
    return await call(ctx.client.GET('/mesh/nodes/{node_id}/drain/status', { params: { path: { node_id: id } } }));
  } finally {
    progress.done();
    stream.close();
  }
}
