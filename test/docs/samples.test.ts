import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

// Every ```ts sample of the README and docs/ is type-checked against the real code, so
// that a sample cannot drift from the API it shows. A sample marked ```ts fragment (a few
// lines out of a larger file) is skipped.

const execFileAsync = promisify(execFile);
/** The repository root (tests run from dist/test/docs). */
const ROOT = resolve(__dirname, '../../..');
/** Folders a sample may import from, as `../../core/...` from `plugins/<id>/index.ts`. */
const TREES = ['core', 'config', 'kernels', 'plugins', 'test'];

interface Sample {
  doc: string;
  line: number;
  code: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** The ```ts blocks of a Markdown file, without the fragments. */
export function samplesOf(doc: string, text: string): Sample[] {
  const out: Sample[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```ts(\s.*)?$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i].startsWith('```'); i++) body.push(lines[i]);
    if (!(open[1] ?? '').includes('fragment')) out.push({ doc, line: start + 1, code: body.join('\n') });
  }
  return out;
}

/** Where a sample is written: the path its first line names (`// kernels/x/worker.ts: ...`), or a plugin of its own. */
function placeOf(sample: Sample, index: number): string {
  const named = /^\/\/ ((?:core|config|kernels|plugins|test)\/[\w./-]+\.ts)(?:[:\s]|$)/.exec(sample.code.split('\n')[0] ?? '');
  return named ? named[1] : `plugins/doc-sample-${index}/index.ts`;
}

/** A tree that sees the repository's folders through links, so samples import the real code. */
function sampleTree(base: string): void {
  mkdirSync(base, { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(base, 'node_modules'), 'dir');
  for (const tree of TREES) {
    mkdirSync(join(base, tree));
    for (const e of readdirSync(join(ROOT, tree))) symlinkSync(join(ROOT, tree, e), join(base, tree, e));
  }
}

/**
 * Makes every folder from `base` down to `base/rel` a real folder (its entries linked), so
 * that a sample written there never lands in the repository through a link.
 */
function realFolders(base: string, rel: string): void {
  let at = base;
  for (const part of rel.split('/').filter(Boolean)) {
    at = join(at, part);
    const repo = join(ROOT, relative(base, at));
    if (existsSync(at) && lstatSync(at).isSymbolicLink()) {
      unlinkSync(at);
      mkdirSync(at);
      for (const e of readdirSync(repo)) symlinkSync(join(repo, e), join(at, e));
    } else if (!existsSync(at)) {
      mkdirSync(at);
    }
  }
}

describe('README and docs/ code samples', () => {
  it('type-check against the code (```ts fragment blocks are skipped)', async function () {
    this.timeout(180_000);
    const docs = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];
    const samples = docs.flatMap((d) => samplesOf(relative(ROOT, d), readFileSync(d, 'utf8')));
    expect(samples.length, 'samples found').to.be.greaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), 'doc-samples-'));
    try {
      const files: string[] = [];
      const origin = new Map<string, Sample>();
      for (const doc of new Set(samples.map((s) => s.doc))) {
        // One tree per document: its samples may import each other (a manifest and its worker).
        const base = join(dir, doc.replace(/[^A-Za-z0-9]+/g, '_'));
        sampleTree(base);
        samples.filter((s) => s.doc === doc).forEach((s, i) => {
          const place = placeOf(s, i);
          // Never write through a link into the repository.
          expect(existsSync(join(ROOT, place)), `${doc}:${s.line} names an existing file ${place}`).to.equal(false);
          const file = join(base, place);
          realFolders(base, dirname(place));
          writeFileSync(file, s.code + '\n');
          files.push(file);
          origin.set(relative(dir, file), s);
        });
      }
      const options = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
      const { rootDir: _r, outDir: _o, sourceMap: _s, ...compilerOptions } = options.compilerOptions;
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true, typeRoots: [join(ROOT, 'node_modules/@types')] }, files }));
      const run = await execFileAsync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).catch(
        (err: { stdout?: string; stderr?: string }) => err,
      );
      // Name each error by its document and line instead of the temporary file (tsc prints
      // paths relative to its working directory).
      const errors = `${run.stdout ?? ''}${run.stderr ?? ''}`
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          for (const [file, s] of origin) if (l.startsWith(file)) return `${s.doc} (sample at line ${s.line})${l.slice(file.length)}`;
          return l;
        });
      expect(errors).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
