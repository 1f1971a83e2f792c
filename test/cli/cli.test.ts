import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { eventually } from '../helpers/eventually';
import { startHost, type TestHost } from '../helpers/host';
import { pcctl, tempHome } from './run';

// The exit codes docs/cli.md documents.
const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, conflict: 5, server: 6 };

describe('pcctl (bin/pcctl as a child process) against a host', function () {
  this.timeout(60_000);
  let t: TestHost;
  let env: Record<string, string>;
  let home: string;
  const bad = () => ({ ...env, PC_TOKEN: 'not-a-token' });
  before(async () => {
    t = await startHost();
    home = tempHome();
    env = { PC_URL: t.url, PC_TOKEN: t.adminToken, HOME: home };
  });
  after(() => t?.stop());

  describe('login and the profile', () => {
    it('saves URL and token in $XDG_CONFIG_HOME/pcctl/config.json, mode 0600, and uses them', async () => {
      const xdg = tempHome();
      const r = await pcctl(['login', '--url', t.url, '--email', t.admin.email, '--password-stdin'], { HOME: home, XDG_CONFIG_HOME: xdg }, t.admin.password + '\n');
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      const file = path.join(xdg, 'pcctl', 'config.json');
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { url: string; token: string };
      expect(profile.url).to.equal(t.url);
      const ls = await pcctl(['kernels', 'ls', '-o', 'json'], { HOME: home, XDG_CONFIG_HOME: xdg });
      expect(ls.code, ls.stderr).to.equal(EXIT.ok);
      expect((JSON.parse(ls.stdout) as Array<{ id: string }>).map((k) => k.id)).to.include('analytics');
    });

    it('falls back to ~/.config when XDG_CONFIG_HOME is unset', async () => {
      const h = tempHome();
      const r = await pcctl(['login', '--email', t.admin.email, '-o', 'json'], { HOME: h, PC_URL: t.url, PC_PASSWORD: t.admin.password });
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      expect((JSON.parse(r.stdout) as { role: string }).role).to.equal('admin');
      expect(fs.existsSync(path.join(h, '.config', 'pcctl', 'config.json'))).to.equal(true);
    });

    it('a wrong password is an auth error and writes no profile', async () => {
      const h = tempHome();
      const r = await pcctl(['login', '--url', t.url, '--email', t.admin.email, '--password-stdin'], { HOME: h }, 'wrong-password\n');
      expect(r.code).to.equal(EXIT.auth);
      expect(r.stderr).to.match(/401/);
      expect(fs.existsSync(path.join(h, '.config', 'pcctl'))).to.equal(false);
    });

    it('without any URL: a usage error', async () => {
      const r = await pcctl(['kernels', 'ls'], { HOME: tempHome() });
      expect(r.code).to.equal(EXIT.usage);
      expect(r.stderr).to.match(/no service URL/);
    });
  });

  describe('kernels and nodes', () => {
    it('kernels ls: a table, and JSON with -o json; a bad token exits 3', async () => {
      const r = await pcctl(['kernels', 'ls'], env);
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      expect(r.stdout.split('\n')[0]).to.match(/^KERNEL\s+STATE\s+HEALTH\s+BREAKER/);
      expect(r.stdout).to.match(/^analytics\s+active/m);
      expect((await pcctl(['kernels', 'ls'], bad())).code).to.equal(EXIT.auth);
    });

    it('nodes ls filters by kernel; show, pause (409 twice: exit 5), resume', async () => {
      const ls = await pcctl(['nodes', 'ls', '--kernel', 'analytics', '-o', 'json'], env);
      const nodes = JSON.parse(ls.stdout) as Array<{ id: string; kernel_id: string }>;
      expect(nodes.map((n) => n.kernel_id)).to.deep.equal(['analytics']);
      const id = nodes[0].id;
      const show = await pcctl(['nodes', 'show', id], env);
      expect(show.stdout).to.match(new RegExp(`^id\\s+${id}$`, 'm'));
      const paused = await pcctl(['nodes', 'pause', id, '-o', 'json'], env);
      expect((JSON.parse(paused.stdout) as { state: string }).state).to.equal('paused');
      const again = await pcctl(['nodes', 'pause', id], env);
      expect(again.code).to.equal(EXIT.conflict);
      expect(again.stderr).to.match(/409/);
      const resumed = await pcctl(['nodes', 'resume', id, '-o', 'json'], env);
      expect((JSON.parse(resumed.stdout) as { state: string }).state).to.equal('active');
    });

    it('an unknown node exits 4, a malformed id 2, a bad token 3', async () => {
      expect((await pcctl(['nodes', 'show', 'analytics-99'], env)).code).to.equal(EXIT.notFound);
      expect((await pcctl(['nodes', 'show', 'Not_An_Id'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['nodes', 'pause', 'analytics-1'], bad())).code).to.equal(EXIT.auth);
    });

    it('drain --wait follows the stream until drained; drain-status then shows it; no progress bar off a terminal', async () => {
      const ls = JSON.parse((await pcctl(['nodes', 'ls', '--kernel', 'compute', '-o', 'json'], env)).stdout) as Array<{ id: string }>;
      const id = ls[0].id;
      const r = await pcctl(['nodes', 'drain', id, '--deadline', '1', '--wait', '--timeout', '30', '-o', 'json'], env);
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      expect((JSON.parse(r.stdout) as { state: string; progress: number }).state).to.equal('drained');
      expect(r.stderr).to.equal('');
      const status = await pcctl(['nodes', 'drain-status', id], env);
      expect(status.stdout).to.match(/^state\s+drained$/m);
      expect((await pcctl(['nodes', 'drain', id], env)).code).to.equal(EXIT.conflict);
      expect((await pcctl(['nodes', 'drain', id, '--deadline', 'soon'], env)).code).to.equal(EXIT.usage);
      await pcctl(['nodes', 'resume', id], env);
    });
  });

  describe('tasks', () => {
    it('tasks run with --input @file prints the output; bad JSON exits 2; a refused input 2; an unknown task 4', async () => {
      const file = path.join(home, 'input.json');
      fs.writeFileSync(file, JSON.stringify({ values: [2, 4, 6] }));
      const r = await pcctl(['tasks', 'run', 'analytics', 'describe', '--input', `@${file}`, '-o', 'json'], env);
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      expect((JSON.parse(r.stdout) as { output: { mean: number } }).output.mean).to.equal(4);
      const text = await pcctl(['tasks', 'run', 'analytics', 'describe', '--input', '-'], env, '{"values":[1,3]}');
      expect((JSON.parse(text.stdout) as { mean: number }).mean).to.equal(2);
      expect((await pcctl(['tasks', 'run', 'analytics', 'describe', '--input', '{nope'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['tasks', 'run', 'analytics', 'describe', '--input', '{"values":[]}'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['tasks', 'run', 'analytics', 'no_such_task', '--input', '{}'], env)).code).to.equal(EXIT.notFound);
      expect((await pcctl(['tasks', 'run', 'analytics', 'describe', '--input', '{"values":[1]}'], bad())).code).to.equal(EXIT.auth);
    });
  });

  describe('incidents', () => {
    it('ls, show with its timeline, resolve; resolving twice is a conflict', async () => {
      const created = await t.request<{ id: string }>('POST', '/incidents/detect', { body: { title: 'cli test incident', severity: 'high', domain: 'analytics' } });
      expect(created.status).to.equal(201);
      const id = created.body.id;
      const ls = await pcctl(['incidents', 'ls', '--severity', 'high', '-o', 'json'], env);
      expect((JSON.parse(ls.stdout) as Array<{ id: string }>).map((i) => i.id)).to.include(id);
      const table = await pcctl(['incidents', 'ls'], env);
      expect(table.stdout).to.match(new RegExp(`^${id}\\s+high\\s+open`, 'm'));
      const show = await pcctl(['incidents', 'show', id], env);
      expect(show.stdout).to.match(/^title\s+cli test incident$/m);
      expect(show.stdout).to.match(/^AT\s+KIND/m);
      const resolved = await pcctl(['incidents', 'resolve', id, '--note', 'fixed', '-o', 'json'], env);
      expect((JSON.parse(resolved.stdout) as { state: string }).state).to.equal('resolved');
      expect((await pcctl(['incidents', 'resolve', id], env)).code).to.equal(EXIT.conflict);
      expect((await pcctl(['incidents', 'ls', '--severity', 'huge'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['incidents', 'ls'], bad())).code).to.equal(EXIT.auth);
    });
  });

  describe('workflows', () => {
    it('ls, run, ls --runs, cancel (a finished run: conflict), unknown workflow: not found', async () => {
      const def = await t.request<{ id: string }>('POST', '/workflows', { body: { name: 'cli-flow', steps: [{ id: 'a', kernel: 'analytics', task: 'describe', input: { values: [1, 2] } }] } });
      expect(def.status).to.equal(201);
      const ls = await pcctl(['workflows', 'ls'], env);
      expect(ls.stdout).to.match(new RegExp(`^${def.body.id}\\s+cli-flow\\s+analytics\\.describe`, 'm'));
      const run = await pcctl(['workflows', 'run', def.body.id, '-o', 'json'], env);
      expect(run.code, run.stderr).to.equal(EXIT.ok);
      const exec = JSON.parse(run.stdout) as { id: string };
      await eventually(async () => {
        const runs = JSON.parse((await pcctl(['workflows', 'ls', '--runs', '--status', 'succeeded', '-o', 'json'], env)).stdout) as Array<{ id: string }>;
        return runs.some((e) => e.id === exec.id);
      }, 20_000, 'the execution succeeded');
      expect((await pcctl(['workflows', 'cancel', exec.id], env)).code).to.equal(EXIT.conflict);
      expect((await pcctl(['workflows', 'run', '00000000-0000-4000-8000-000000000000'], env)).code).to.equal(EXIT.notFound);
      expect((await pcctl(['workflows', 'ls'], bad())).code).to.equal(EXIT.auth);
    });
  });

  describe('chaos', () => {
    it('ls, run, ls --experiments, abort, halt; aborting twice is a conflict', async () => {
      const scenarios = JSON.parse((await pcctl(['chaos', 'ls', '-o', 'json'], env)).stdout) as Array<{ scenario_id: string; injection_type: string }>;
      const latency = scenarios.find((s) => s.injection_type === 'latency')!;
      const run = await pcctl(['chaos', 'run', latency.scenario_id, '-o', 'json'], env);
      expect(run.code, run.stderr).to.equal(EXIT.ok);
      const e = JSON.parse(run.stdout) as { experiment_id: string; status: string };
      expect(e.status).to.equal('running');
      const list = await pcctl(['chaos', 'ls', '--experiments'], env);
      expect(list.stdout).to.match(new RegExp(`^${e.experiment_id}\\s`, 'm'));
      const aborted = await pcctl(['chaos', 'abort', e.experiment_id, '-o', 'json'], env);
      expect((JSON.parse(aborted.stdout) as { status: string }).status).to.equal('aborted');
      expect((await pcctl(['chaos', 'abort', e.experiment_id], env)).code).to.equal(EXIT.conflict);
      const halt = await pcctl(['chaos', 'halt', '-o', 'json'], env);
      expect((JSON.parse(halt.stdout) as { halted_total: number }).halted_total).to.equal(0);
      expect((await pcctl(['chaos', 'run', '00000000-0000-4000-8000-000000000000'], env)).code).to.equal(EXIT.notFound);
      expect((await pcctl(['chaos', 'halt'], bad())).code).to.equal(EXIT.auth);
    });
  });

  describe('events tail', () => {
    it('prints the filtered stream, one JSON object a line with -o json', async () => {
      const tail = pcctl(['events', 'tail', '--type', 'node_state', '--node', 'trading-1', '--count', '2', '-o', 'json'], env);
      // The tail is subscribed once the hub counts its client; then the changes happen.
      await eventually(() => t.host.services.hub.clients.size > 0, 10_000, 'the tail connected');
      await t.request('POST', '/mesh/nodes/llm-1/pause');
      await t.request('POST', '/mesh/nodes/trading-1/pause');
      await t.request('POST', '/mesh/nodes/trading-1/resume');
      await t.request('POST', '/mesh/nodes/llm-1/resume');
      const r = await tail;
      expect(r.code, r.stderr).to.equal(EXIT.ok);
      const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; data: { node_id: string; state: string } });
      expect(lines.map((l) => [l.type, l.data.node_id, l.data.state])).to.deep.equal([
        ['node_state', 'trading-1', 'paused'],
        ['node_state', 'trading-1', 'active'],
      ]);
    });

    it('a bad token exits 3 before connecting', async () => {
      const r = await pcctl(['events', 'tail', '--count', '1'], bad());
      expect(r.code).to.equal(EXIT.auth);
    });
  });

  describe('ingest', () => {
    it('sends batches and sums accepted, duplicates and rejected by line number (exit 1 with rejections)', async () => {
      const ev = (id: string) => JSON.stringify({ id, kernel: 'analytics', task: 'describe', duration_ms: 3 });
      const lines = [ev('cli-e1'), ev('cli-e2'), 'not json', '', ev('cli-e1'), JSON.stringify({ id: 'cli-e3', kernel: 'analytics' }), ev('cli-e4')];
      const r = await pcctl(['ingest', 'kernel', '--batch', '2', '-o', 'json'], env, lines.join('\n') + '\n');
      expect(r.code).to.equal(EXIT.failed);
      const s = JSON.parse(r.stdout) as { lines: number; accepted: number; duplicates: number; rejected: Array<{ line: number; detail: string }> };
      expect(s.lines).to.equal(7);
      expect(s.accepted).to.equal(3);
      expect(s.duplicates).to.equal(1);
      expect(s.rejected.map((x) => x.line)).to.deep.equal([3, 6]);
      expect(s.rejected[1].detail).to.match(/task|duration_ms/);
      // Sent again: every valid line is now a duplicate.
      const again = await pcctl(['ingest', 'kernel'], env, [ev('cli-e1'), ev('cli-e2')].join('\n'));
      expect(again.code, again.stderr).to.equal(EXIT.ok);
      expect(again.stdout).to.match(/^2 lines: 0 accepted, 2 duplicates, 0 rejected$/m);
    });

    it('an unknown kind is a usage error, a bad token an auth error', async () => {
      expect((await pcctl(['ingest', 'metrics'], env, '{}\n')).code).to.equal(EXIT.usage);
      const r = await pcctl(['ingest', 'kernel'], bad(), JSON.stringify({ kernel: 'a', task: 'b', duration_ms: 1 }) + '\n');
      expect(r.code).to.equal(EXIT.auth);
    });
  });

  describe('health and usage', () => {
    it('health: components in a table, exit 0 once healthy; an unreachable service exits 6', async () => {
      const r = await eventually(async () => {
        const x = await pcctl(['health'], env);
        return x.code === EXIT.ok && x;
      }, 20_000, 'the service reported healthy');
      expect(r.stdout).to.match(/^healthy\s/);
      expect(r.stdout).to.match(/^database\s+healthy$/m);
      const json = await pcctl(['health', '-o', 'json'], env);
      expect((JSON.parse(json.stdout) as { status: string }).status).to.equal('healthy');
      expect((await pcctl(['health'], { ...env, PC_URL: 'http://127.0.0.1:9' })).code).to.equal(EXIT.server);
    });

    it('an unknown command or option, or a bad --output, is a usage error', async () => {
      expect((await pcctl(['nodes', 'explode'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['kernels', 'ls', '--bogus'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['kernels', 'ls', '-o', 'yaml'], env)).code).to.equal(EXIT.usage);
      expect((await pcctl(['--help'], env)).code).to.equal(EXIT.ok);
    });
  });
});
