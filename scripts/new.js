// `make new-kernel NAME=geo` / `make new-plugin NAME=notes`: writes a working kernel or plugin
// and its passing test from templates/<kind>/ (the files docs/writing-a-*.md show).
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const KINDS = { kernel: 'kernels', plugin: 'plugins' };

/** The files of a scaffold: [{file, text}] with the name filled in (paths relative to the root). */
function render(kind, name) {
  if (!KINDS[kind]) throw new Error(`unknown kind "${kind}": kernel or plugin`);
  if (!/^[a-z][a-z0-9-]{0,39}$/.test(name ?? '')) throw new Error(`NAME must be lowercase letters, digits and dashes, starting with a letter (got "${name ?? ''}")`);
  const words = {
    __NAME__: name,
    __SNAKE__: name.replace(/-/g, '_'),
    __CAMEL__: name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase()),
  };
  const fill = (text) => text.replace(/__(NAME|SNAKE|CAMEL)__/g, (w) => words[w]);
  const base = path.join(ROOT, 'templates', kind);
  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
  return walk(base).sort().map((file) => ({ file: fill(path.relative(base, file)).split(path.sep).join('/'), text: fill(fs.readFileSync(file, 'utf8')) }));
}

/** Writes the scaffold under `root`; refuses to overwrite anything. */
function scaffold(kind, name, root = ROOT) {
  const files = render(kind, name);
  const taken = files.filter((f) => fs.existsSync(path.join(root, f.file)));
  if (fs.existsSync(path.join(root, KINDS[kind], name))) taken.unshift({ file: `${KINDS[kind]}/${name}` });
  if (taken.length) throw new Error(`${kind} "${name}" exists already: ${taken.map((f) => f.file).join(', ')}`);
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(root, f.file)), { recursive: true });
    fs.writeFileSync(path.join(root, f.file), f.text);
  }
  return files.map((f) => f.file);
}

if (require.main === module) {
  const [kind, name] = process.argv.slice(2);
  try {
    const written = scaffold(kind, name);
    const test = written.find((f) => f.startsWith('test/'));
    console.log(`wrote ${written.join(', ')}\nnext: make build && npx mocha dist/${test.replace(/\.ts$/, '.js')}`);
  } catch (err) {
    console.error(`new ${kind ?? ''}: ${err.message}`);
    process.exit(1);
  }
}

module.exports = { render, scaffold };
