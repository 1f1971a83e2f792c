// `make bench`: the real service against raw node:http and bare Express, in one run.
import { drive, printTable, startBaseline, startService, DURATION, CONNECTIONS, type Row } from './harness';
import { scenarios } from './scenarios';

async function main(): Promise<void> {
  const raw = await startBaseline('raw');
  const bare = await startBaseline('express');
  const service = await startService();
  const procs = [raw.proc, bare.proc, service.proc];
  try {
    process.stdout.write(`bench: ${CONNECTIONS} connections, ${DURATION} s per scenario, autocannon in its own process\n\n`);
    const rawFig = await drive({ url: `${raw.url}/` });
    const expressFig = await drive({ url: `${bare.url}/` });
    const rows: Row[] = [
      { name: 'raw node:http (baseline)', figures: rawFig },
      { name: 'bare express 5 (baseline)', figures: expressFig, vsRaw: rawFig },
    ];
    for (const s of scenarios) {
      const out = await s.run({ url: service.url, adminEmail: service.adminEmail, adminPassword: service.adminPassword });
      for (const row of out) rows.push({ vsExpress: expressFig, vsRaw: rawFig, ...row });
    }
    process.stdout.write('\n');
    printTable(rows);
  } finally {
    for (const p of procs) p.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
