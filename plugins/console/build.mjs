// Bundles the console (ui/) into dist/plugins/console/assets/ with esbuild: one script, one
// style sheet and the page. Run by `make build` after tsc; `--watch` rebuilds on change.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const out = path.join(root, 'dist/plugins/console/assets');
fs.mkdirSync(out, { recursive: true });
const options = {
  entryPoints: { app: path.join(here, 'ui/main.ts'), style: path.join(here, 'ui/style.css') },
  outdir: out,
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  target: ['es2022'],
  format: 'iife',
  logLevel: 'warning',
};
fs.copyFileSync(path.join(here, 'ui/index.html'), path.join(out, 'index.html'));
if (process.argv.includes('--watch')) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
