// The supported Node.js lines: `engines` names them, CI tests them, `make run` refuses others.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '..', '..', '..');
// A plain script (it runs before the build): loaded the way `make run` runs it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { check } = require(path.join(ROOT, 'scripts', 'check-node.js')) as { check: (v: string, range: string, allow: boolean) => { ok: boolean; message: string | null } };

describe('supported Node.js lines', () => {
  const engines = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node as string;

  it('engines lists the lines CI runs the suite on, and this runtime is one of them', () => {
    const ci = fs.readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    const lines = ci.match(/for line in ([\d ]+); do/)![1].trim().split(/\s+/);
    for (const line of lines) expect(engines).to.include(`${line}.x`);
    expect(check(process.version, engines, false)).to.deep.equal({ ok: true, message: null });
  });

  it('refuses an untested major with a message naming it, unless told otherwise', () => {
    const refused = check('v19.9.0', '20.x || 22.x || 24.x', false);
    expect(refused.ok).to.equal(false);
    expect(refused.message).to.equal('Node.js v19.9.0 is not a tested line (tested: 20, 22, 24; see docs/runtime.md). Use one of those, or set ALLOW_UNTESTED_NODE=1 to start anyway.');
    const allowed = check('v26.1.0', '22.x || 24.x', true);
    expect(allowed).to.deep.equal({ ok: true, message: 'warning: Node.js v26.1.0 is not a tested line (tested: 22, 24; see docs/runtime.md); starting anyway (ALLOW_UNTESTED_NODE=1).' });
    expect(check('v24.21.0', '22.x || 24.x', false).ok).to.equal(true);
  });
});
