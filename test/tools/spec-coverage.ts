// `make spec-coverage`: which endpoints of the spec the host serves, and which it lacks.
import { matchKey, servedRoutes, specEndpoints } from '../helpers/spec';

const served = new Set(servedRoutes().map((r) => matchKey(r.method, r.path)));
const spec = specEndpoints();
const missing = spec.filter((e) => !served.has(matchKey(e.method, e.path)));
const bySection = new Map<string, number>();
for (const m of missing) bySection.set(m.section, (bySection.get(m.section) ?? 0) + 1);
process.stdout.write(`covered ${spec.length - missing.length}/${spec.length}\n`);
if (missing.length) {
  process.stdout.write('\nmissing by section:\n');
  for (const [section, n] of bySection) process.stdout.write(`  ${String(n).padStart(3)}  ${section}\n`);
  process.stdout.write('\nmissing:\n');
  for (const m of missing) process.stdout.write(`  ${m.method.padEnd(6)} ${m.path}\n`);
}
