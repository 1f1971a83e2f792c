import { openStream, type SocketConstructor, type StreamMessage } from '@platform-control/client';
import { Command } from 'commander';
import WebSocket from 'ws';
import { call, contextOf, intOption } from '../context';
import { CliError, EXIT } from '../errors';
import { out } from '../output';

/** Whether an event concerns a kernel (by id or domain) or a node, by the fields the messages carry. */
function concerns(m: StreamMessage, kernel?: string, node?: string): boolean {
  const d = m.data as Record<string, unknown>;
  if (kernel && ![d.kernel_id, d.domain, d.kernel].includes(kernel) && !(Array.isArray(d.target_domains) && d.target_domains.includes(kernel))) return false;
  if (node && d.node_id !== node) return false;
  return true;
}

export function eventsCommand(): Command {
  const events = new Command('events').description('the live event stream (/ops/stream)');
  events
    .command('tail')
    .description('print live events until interrupted (or --count): a line each; -o json prints one JSON object a line')
    .option('--type <types>', 'only these event types, comma-separated (node_state,drain_progress,incident,...)')
    .option('--kernel <kernel>', 'only events of this kernel (id or domain)')
    .option('--node <node_id>', 'only events of this node')
    .option('--snapshot', 'print the mesh snapshot the stream starts with')
    .option('--count <n>', 'stop after this many events', intOption('--count'))
    .action(async (o: { type?: string; kernel?: string; node?: string; snapshot?: boolean; count?: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      // The socket's refusal carries no status a client can read: the credentials are checked
      // over HTTP first, so a bad token exits as an auth error.
      await call(ctx.client.GET('/auth/me'));
      const types = o.type ? o.type.split(',').map((t) => t.trim()).filter(Boolean) : undefined;
      const stream = openStream({ baseUrl: ctx.url, token: ctx.token, types, WebSocket: WebSocket as unknown as SocketConstructor });
      const stop = () => stream.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let n = 0;
      try {
        for await (const m of stream) {
          if (m.type === 'subscribed' || m.type === 'pong') continue;
          if (m.type === 'snapshot' && !o.snapshot) continue;
          if (m.type === 'error') throw new CliError(EXIT.usage, `stream refused: ${m.data.detail}`);
          if (m.type !== 'snapshot' && !concerns(m, o.kernel, o.node)) continue;
          if (ctx.format === 'json') out(JSON.stringify(m) + '\n');
          else out(`${m.timestamp}  ${m.type.padEnd(16)}  ${JSON.stringify(m.data)}\n`);
          if (m.type !== 'snapshot' && o.count !== undefined && ++n >= o.count) break;
        }
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        stream.close();
      }
      const closed = await stream.closed;
      if (closed.code === 4401) throw new CliError(EXIT.auth, 'the stream was closed: token expired or revoked');
      if (closed.code !== 1000 && closed.code !== 1005) throw new CliError(EXIT.server, `the stream was closed (${closed.code}${closed.reason ? `: ${closed.reason}` : ''})`);
    });
  return events;
}
