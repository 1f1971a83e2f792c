// `make new-kernel` / `make new-plugin`: the scaffolds, written into a copy of the project,
// build and pass their own tests; the docs show exactly the templates they come from.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '..', '..', '..');
type File = { file: string; text: string };
// Plain scripts (they run before any build): loaded the way make runs them.
const { render, scaffold } = require(path.join(ROOT, 'scripts', 'new.js')) as { render: (kind: string, name: string) => File[]; scaffold: (kind: string, name: string, root?: string) => string[] };

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('close', (code) => resolve({ code, out }));
  });
}

/** The ```ts blocks of a doc that start with a `// <path>:` line, by that path. */
function docBlocks(doc: string): Map<string, string> {
  const text = fs.readFileSync(path.join(ROOT, 'docs', doc), 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/```ts\n(\/\/ ([\w./-]+): [^]*?)```/g)) out.set(m[2], m[1]);
  return out;
}

describe('scaffolds (make new-kernel, make new-plugin)', () => {
  it('the docs show the templates as the scaffolds write them', () => {
    for (const [doc, kind, name] of [['writing-a-kernel.md', 'kernel', 'geo'], ['writing-a-plugin.md', 'plugin', 'notes']]) {
      const blocks = docBlocks(doc);
      for (const f of render(kind, name)) {
        expect(blocks.has(f.file), `${doc} shows ${f.file}`).to.equal(true);
        expect(blocks.get(f.file), `${doc}: ${f.file}`).to.equal(f.text);
      }
    }
  });

  it('refuses a bad name and an existing kernel or plugin', () => {
    expect(() => render('kernel', 'Geo')).to.throw(/NAME must be lowercase letters/);
    expect(() => render('widget', 'geo')).to.throw(/unknown kind "widget"/);
    expect(() => scaffold('kernel', 'analytics')).to.throw(/kernel "analytics" exists already: kernels\/analytics/);
    expect(() => scaffold('plugin', 'incidents')).to.throw(/plugin "incidents" exists already/);
  });

  it('a new kernel and a new plugin build and pass their generated tests', async function () {
    this.timeout(300_000);
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-scaffold-'));
    try {
      for (const item of ['core', 'plugins', 'kernels', 'config', 'scripts', 'templates', path.join('test', 'helpers'), 'package.json', 'tsconfig.json', '.mocharc.json']) {
        fs.cpSync(path.join(ROOT, item), path.join(tree, item), { recursive: true });
      }
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
      const made = await run(process.execPath, ['scripts/new.js', 'kernel', 'geo'], tree);
      expect(made.code, made.out).to.equal(0);
      expect(made.out).to.match(/^wrote kernels\/geo\/manifest\.ts, kernels\/geo\/worker\.ts, test\/kernels\/geo\.test\.ts/);
      const plugin = await run(process.execPath, ['scripts/new.js', 'plugin', 'notes'], tree);
      expect(plugin.code, plugin.out).to.equal(0);
      // Only what the new files need is compiled (their imports bring in core): a smaller build.
      const generated = ['kernels/geo', 'plugins/notes', 'test/kernels/geo.test.ts', 'test/plugins/notes.test.ts'];
      fs.writeFileSync(path.join(tree, 'tsconfig.scaffold.json'), JSON.stringify({ extends: './tsconfig.json', include: generated }));
      const build = await run(process.execPath, ['node_modules/@typescript/native/bin/tsc', '-p', 'tsconfig.scaffold.json'], tree);
      expect(build.code, build.out).to.equal(0);
      const tests = await run(process.execPath, ['node_modules/mocha/bin/mocha.js', 'dist/test/kernels/geo.test.js', 'dist/test/plugins/notes.test.js'], tree);
      expect(tests.code, tests.out).to.equal(0);
      expect(tests.out).to.match(/13 passing/);
      expect(tests.out).to.not.match(/failing|pending/);
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });
});
