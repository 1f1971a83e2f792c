// `make bench`: the real service against raw node:http and bare Express, in one run.
// BENCH_ONLY=word[,word] runs only the scenarios whose name holds one of the words (and
// skips the baselines, unless one of the words is "baseline"); a scenario marked explicit
// (telemetry at scale) runs only when named. BENCH_JSON=path also writes
// every row (figures and ratios) as JSON, so that two runs can be compared.
import fs from 'node:fs';
import { drive, printTable, startBaseline, startService, DURATION, CONNECTIONS, type Row } from './harness';
import { scenarios } from './scenarios';

const ONLY = (process.env.BENCH_ONLY ?? '').split(',').map((w) => w.trim().toLowerCase()).filter(Boolean);
const chosen = (name: string) => ONLY.length === 0 || ONLY.some((w) => name.toLowerCase().includes(w));

async function main(): Promise<void> {
  const withBaselines = chosen('baseline');
  const picked = scenarios.filter((x) => chosen(x.name) && (!x.explicit || ONLY.length > 0));
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
    if (process.env.BENCH_JSON) writeJson(process.env.BENCH_JSON, rows);
  } finally {
    for (const p of procs) p?.kill('SIGTERM');
  }
}

function writeJson(file: string, rows: Row[]): void {
  const ratio = (x: Row['figures'], to: Row['figures'] | undefined) => (to && to.rps > 0 ? x.rps / to.rps : null);
  const out = {
    node: process.version,
    v8: process.versions.v8,
    at: new Date().toISOString(),
    connections: CONNECTIONS,
    seconds: DURATION,
    rows: rows.map((r) => ({ name: r.name, ...r.figures, x_express: ratio(r.figures, r.vsExpress), x_raw: ratio(r.figures, r.vsRaw), note: r.note ?? null })),
  };
  fs.writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`\nbench: ${rows.length} rows written to ${file}\n`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
