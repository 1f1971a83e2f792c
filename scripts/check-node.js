// `make run` starts the service only on a Node.js line the suite runs on in CI (the lines in
// package.json `engines`); ALLOW_UNTESTED_NODE=1 starts it on another one anyway, with a warning.
const path = require('node:path');

/** The verdict for a Node.js version against an engines range such as "22.x || 24.x". */
function check(version, range, allow) {
  const lines = range.split('||').map((r) => r.trim().match(/^\^?(\d+)/)?.[1]).filter(Boolean);
  const major = version.replace(/^v/, '').split('.')[0];
  if (lines.includes(major)) return { ok: true, message: null };
  const what = `Node.js ${version} is not a tested line (tested: ${lines.join(', ')}; see docs/runtime.md)`;
  if (allow) return { ok: true, message: `warning: ${what}; starting anyway (ALLOW_UNTESTED_NODE=1).` };
  return { ok: false, message: `${what}. Use one of those, or set ALLOW_UNTESTED_NODE=1 to start anyway.` };
}

if (require.main === module) {
  const { engines } = require(path.join(__dirname, '..', 'package.json'));
  const verdict = check(process.version, engines.node, process.env.ALLOW_UNTESTED_NODE === '1');
  if (verdict.message) console.error(verdict.message);
  if (!verdict.ok) process.exit(1);
}

module.exports = { check };
