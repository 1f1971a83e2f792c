// `make bench`: the real service against raw node:http and bare Express, in one run.
// BENCH_ONLY=word[,word] runs only the scenarios whose name holds one of the words (and
// skips the baselines, unless one of the words is "baseline").
import { drive, printTable, startBaseline, startService, DURATION, CONNECTIONS, type Row } from './harness';
import { scenarios } from './scenarios';

const ONLY = (process.env.BENCH_ONLY ?? '').split(',').map((w) => w.trim().toLowerCase()).filter(Boolean);
const chosen = (name: string) => ONLY.length === 0 || ONLY.some((w) => name.toLowerCase().includes(w));

async function main(): Promise<void> {
  const withBaselines = chosen('baseline');
  const picked = scenarios.filter((x) => chosen(x.name));
  // Idle servers are not idle on a small machine (kernel heartbeats): start only those needed.
  const raw = withBaselines ? await startBaseline('raw') : null;
  const bare = withBaselines ? await startBaseline('express') : null;
  const service = picked.some((x) => !x.selfContained) ? await startService() : null;
  const procs = [raw?.proc, bare?.proc, service?.proc];
  try {
    // Figures differ between Node.js lines: say which one produced them.
    process.stdout.write(`bench: Node.js ${process.version} (V8 ${process.versions.v8}), ${CONNECTIONS} connections, ${DURATION} s per scenario, autocannon in its own process\n\n`);
    const rows: Row[] = [];
    let rawFig: Row['vsRaw'];
    let expressFig: Row['vsExpress'];
    if (raw && bare) {
      rawFig = await drive({ url: `${raw.url}/` });
      expressFig = await drive({ url: `${bare.url}/` });
      rows.push({ name: 'raw node:http (baseline)', figures: rawFig }, { name: 'bare express 5 (baseline)', figures: expressFig, vsRaw: rawFig });
    }
    for (const s of picked) {
      const out = await s.run({ url: service?.url ?? '', adminEmail: service?.adminEmail ?? '', adminPassword: service?.adminPassword ?? '' });
      for (const row of out) rows.push({ vsExpress: expressFig, vsRaw: rawFig, ...row });
    }
    process.stdout.write('\n');
    printTable(rows);
  } finally {
    for (const p of procs) p?.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
