import fs from 'node:fs';
import type { paths } from '@platform-control/client';
import { Command } from 'commander';
import { call, contextOf, pages } from '../context';
import { CliError, EXIT } from '../errors';
import { fields, json, out, table } from '../output';

type TaskBody = paths['/kernels/{domain}/tasks/{task}']['post']['requestBody']['content']['application/json'];

/** `--input @file`, `--input -` (stdin) or `--input '{"json": 1}'`. */
function readInput(spec: string | undefined): unknown {
  if (spec === undefined) return {};
  let text = spec;
  try {
    if (spec === '-') text = fs.readFileSync(0, 'utf8');
    else if (spec.startsWith('@')) text = fs.readFileSync(spec.slice(1), 'utf8');
  } catch (err) {
    throw new CliError(EXIT.usage, `cannot read ${spec}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(EXIT.usage, `--input is not JSON: ${(err as Error).message}`);
  }
}

export function tasksCommand(): Command {
  const tasks = new Command('tasks').description('kernel tasks');
  tasks
    .command('run <domain> <task>')
    .description("run a kernel task on the kernel's least busy node")
    .option('--input <json|@file|->', 'the task input: JSON, @file or - for stdin', undefined)
    .action(async (domain: string, task: string, o: { input?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      // The body type is every task's input (anyOf); which one applies depends on the path, so
      // the service checks the input against the task's schema (422 names the field).
      const body = readInput(o.input) as TaskBody;
      const res = await call(ctx.client.POST('/kernels/{domain}/tasks/{task}', { params: { path: { domain, task } }, body }));
      if (ctx.format === 'json') return json(res);
      out(JSON.stringify((res as { output?: unknown }).output, null, 2) + '\n');
      process.stderr.write(`${domain}.${task} in ${res.duration_ms} ms\n`);
    });
  return tasks;
}

export function incidentsCommand(): Command {
  const incidents = new Command('incidents').description('incidents');
  incidents
    .command('ls')
    .description('open and mitigated incidents, newest first')
    .option('--severity <severity>', 'low, medium, high or critical')
    .option('--domain <domain>', 'only this kernel domain')
    .option('--all', 'every page')
    .action(async (o: { severity?: string; domain?: string; all?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const rows = await pages(Boolean(o.all), async (cursor) => {
        const query = { severity: o.severity as 'low' | undefined, domain: o.domain, cursor };
        const d = await call(ctx.client.GET('/ops/incidents/active', { params: { query } }));
        return { items: d.incidents, next: d.next_cursor };
      });
      if (ctx.format === 'json') return json(rows);
      out(
        table(rows, [
          { header: 'ID', value: (i) => i.id },
          { header: 'SEVERITY', value: (i) => i.severity },
          { header: 'STATE', value: (i) => i.state },
          { header: 'DOMAIN', value: (i) => i.domain },
          { header: 'CREATED', value: (i) => i.created_at },
          { header: 'TITLE', value: (i) => i.title },
        ]),
      );
    });
  const showIncident = (format: string, inc: { timeline: Array<{ at: string; kind: string; to_state?: string | null; actor?: string | null }> } & Record<string, unknown>) => {
    if (format === 'json') return json(inc);
    out(fields(inc, ['id', 'title', 'severity', 'state', 'domain', 'kernel_id', 'node_id', 'source', 'cause', 'created_by', 'created_at', 'updated_at']));
    out('\n' + table(inc.timeline, [
      { header: 'AT', value: (e) => e.at },
      { header: 'KIND', value: (e) => e.kind },
      { header: 'STATE', value: (e) => e.to_state },
      { header: 'ACTOR', value: (e) => e.actor },
    ]));
  };
  incidents
    .command('show <incident_id>')
    .description('one incident with its timeline')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      showIncident(ctx.format, await call(ctx.client.GET('/ops/incidents/{incident_id}', { params: { path: { incident_id: id } } })));
    });
  incidents
    .command('resolve <incident_id>')
    .description('resolve an open or mitigated incident')
    .option('--note <text>', 'a note for the timeline')
    .action(async (id: string, o: { note?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      showIncident(ctx.format, await call(ctx.client.POST('/ops/incidents/{incident_id}/resolve', { params: { path: { incident_id: id } }, body: { note: o.note } })));
    });
  return incidents;
}

type Execution = { id: string; workflow_name: string; state: string; error: string | null; created_at: string; finished_at: string | null; steps: Array<{ id: string; state: string }> };
const executionColumns = [
  { header: 'EXECUTION', value: (e: Execution) => e.id },
  { header: 'WORKFLOW', value: (e: Execution) => e.workflow_name },
  { header: 'STATE', value: (e: Execution) => e.state },
  { header: 'STEPS', value: (e: Execution) => e.steps.map((s) => `${s.id}:${s.state}`).join(' ') },
  { header: 'CREATED', value: (e: Execution) => e.created_at },
  { header: 'ERROR', value: (e: Execution) => e.error },
];

export function workflowsCommand(): Command {
  const wf = new Command('workflows').description('workflow definitions and executions');
  wf.command('ls')
    .description("the tenant's workflow definitions (--runs: their executions)")
    .option('--runs', 'list executions instead')
    .option('--status <state>', 'with --runs: pending, running, succeeded, failed or cancelled')
    .option('--all', 'every page')
    .action(async (o: { runs?: boolean; status?: string; all?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      if (o.runs) {
        const rows = await pages(Boolean(o.all), async (cursor) => {
          const d = await call(ctx.client.GET('/ops/workflows', { params: { query: { status: o.status as 'running' | undefined, cursor } } }));
          return { items: d.executions, next: d.next_cursor };
        });
        return ctx.format === 'json' ? json(rows) : out(table(rows, executionColumns));
      }
      const rows = await pages(Boolean(o.all), async (cursor) => {
        const d = await call(ctx.client.GET('/ops/workflows/definitions', { params: { query: { cursor } } }));
        return { items: d.definitions, next: d.next_cursor };
      });
      if (ctx.format === 'json') return json(rows);
      out(
        table(rows, [
          { header: 'WORKFLOW', value: (d) => d.id },
          { header: 'NAME', value: (d) => d.name },
          { header: 'STEPS', value: (d) => d.steps.map((s) => `${s.kernel}.${s.task}`).join(' → ') },
          { header: 'CREATED', value: (d) => d.created_at },
        ]),
      );
    });
  wf.command('run <workflow_id>')
    .description('start an execution of a definition')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const e = await call(ctx.client.POST('/workflows/{workflow_id}/run', { params: { path: { workflow_id: id } } }));
      return ctx.format === 'json' ? json(e) : out(table([e], executionColumns));
    });
  wf.command('cancel <execution_id>')
    .description('cancel a pending or running execution')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const e = await call(ctx.client.POST('/ops/workflows/{execution_id}/cancel', { params: { path: { execution_id: id } } }));
      return ctx.format === 'json' ? json(e) : out(table([e], executionColumns));
    });
  return wf;
}

type Experiment = { experiment_id: string; scenario_name: string; injection_type: string; target_domains: string[]; status: string; phase: string; started_at: string };
const experimentColumns = [
  { header: 'EXPERIMENT', value: (e: Experiment) => e.experiment_id },
  { header: 'SCENARIO', value: (e: Experiment) => e.scenario_name },
  { header: 'INJECTION', value: (e: Experiment) => e.injection_type },
  { header: 'TARGETS', value: (e: Experiment) => e.target_domains.join(',') },
  { header: 'STATUS', value: (e: Experiment) => e.status },
  { header: 'PHASE', value: (e: Experiment) => e.phase },
  { header: 'STARTED', value: (e: Experiment) => e.started_at },
];

export function chaosCommand(): Command {
  const chaos = new Command('chaos').description('chaos scenarios and experiments');
  chaos
    .command('ls')
    .description('chaos scenarios (--experiments: the experiment history)')
    .option('--experiments', 'list experiments instead')
    .option('--all', 'every page')
    .action(async (o: { experiments?: boolean; all?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      if (o.experiments) {
        const rows = await pages(Boolean(o.all), async (cursor) => {
          const d = await call(ctx.client.GET('/ops/resilience/experiments', { params: { query: { cursor } } }));
          return { items: d.experiments, next: d.next_cursor };
        });
        return ctx.format === 'json' ? json(rows) : out(table(rows, experimentColumns));
      }
      const rows = await pages(Boolean(o.all), async (cursor) => {
        const d = await call(ctx.client.GET('/ops/resilience/scenarios', { params: { query: { cursor } } }));
        return { items: d.scenarios, next: d.next_cursor };
      });
      if (ctx.format === 'json') return json(rows);
      out(
        table(rows, [
          { header: 'SCENARIO', value: (s) => s.scenario_id },
          { header: 'NAME', value: (s) => s.name },
          { header: 'INJECTION', value: (s) => s.injection_type },
          { header: 'TARGETS', value: (s) => s.target_domains.join(',') },
          { header: 'SECONDS', value: (s) => s.duration_seconds },
          { header: 'BUILTIN', value: (s) => s.builtin },
        ]),
      );
    });
  chaos
    .command('run <scenario_id>')
    .description('run a scenario (steady state, injection, rollback); answers the running experiment')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const e = await call(ctx.client.POST('/ops/resilience/scenarios/{scenario_id}/run', { params: { path: { scenario_id: id } } }));
      return ctx.format === 'json' ? json(e) : out(table([e], experimentColumns));
    });
  chaos
    .command('abort <experiment_id>')
    .description('abort a running experiment: its injections are removed at once')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const e = await call(ctx.client.POST('/ops/resilience/experiments/{experiment_id}/abort', { params: { path: { experiment_id: id } } }));
      return ctx.format === 'json' ? json(e) : out(table([e], experimentColumns));
    });
  chaos
    .command('halt')
    .description('emergency stop: abort every running experiment of the host')
    .action(async (_o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const r = await call(ctx.client.POST('/ops/resilience/halt'));
      return ctx.format === 'json' ? json(r) : out(fields(r));
    });
  return chaos;
}

export function healthCommand(): Command {
  return new Command('health')
    .description("the service's overall health, every component measured now (exit 1 unless healthy)")
    .action(async (_o: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const h = await call(ctx.client.GET('/health/'));
      if (ctx.format === 'json') json(h);
      else {
        out(`${h.status}  ${h.timestamp}\n`);
        out(table(Object.entries(h.components), [
          { header: 'COMPONENT', value: ([name]) => name },
          { header: 'STATUS', value: ([, s]) => s },
        ]));
      }
      if (h.status !== 'healthy') throw new CliError(EXIT.failed, `service is ${h.status}`);
    });
}
