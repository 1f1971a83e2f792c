// `make dev`: tsc in watch mode, and the host (dist/core/main.js) restarted after every build
// that has no errors. tsconfig's noEmitOnError keeps a broken build from reaching dist/, so
// the host goes on running the last good one until the errors are fixed. Kernels are worker
// files loaded at start: a change to one restarts the host like any other change.
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.join(__dirname, '..');
const HOST_ARGS = ['--max-semi-space-size=64', 'dist/core/main.js'];

const tsc = spawn(process.execPath, [path.join(ROOT, 'node_modules', '@typescript', 'native', 'bin', 'tsc'), '-p', 'tsconfig.json', '--watch', '--preserveWatchOutput'], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'inherit'],
  // Its own process group: typescript's bin is a shim that runs the native compiler as a
  // child, and stopping only the shim would leave the compiler watching.
  detached: true,
});
let host = null;
let again = false;
let stopping = false;

function startHost() {
  console.log('[dev] starting the host');
  host = spawn(process.execPath, HOST_ARGS, { cwd: ROOT, stdio: 'inherit' });
  host.on('exit', (code, signal) => {
    host = null;
    if (stopping) return;
    if (again) {
      again = false;
      return startHost();
    }
    console.log(`[dev] the host exited (${signal ?? `code ${code}`}); it starts again after the next good build`);
  });
}

/** Stops the running host (it shuts down gracefully on SIGTERM) and starts the new build. */
function restart() {
  if (!host) return startHost();
  again = true;
  host.kill('SIGTERM');
}

readline.createInterface({ input: tsc.stdout }).on('line', (line) => {
  console.log(`[tsc] ${line}`);
  const found = /Found (\d+) errors?/.exec(line);
  if (!found) return;
  if (found[1] === '0') restart();
  else console.log(`[dev] the build has errors: nothing was emitted${host ? ', the host keeps running the last good build' : ''}`);
});

function stop() {
  stopping = true;
  try {
    process.kill(-tsc.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  if (host) host.kill('SIGTERM');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
tsc.on('exit', () => {
  if (!stopping) {
    console.error('[dev] tsc stopped');
    stop();
    process.exitCode = 1;
  }
});
