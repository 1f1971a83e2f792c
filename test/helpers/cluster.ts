import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually';
import { freePort } from './host';

const MAIN = path.resolve(__dirname, '..', '..', 'core', 'main.js');

export interface HostProcess {
  proc: ChildProcess;
  url: string;
  /** What the process printed so far. */
  output: () => string;
}

/**
 * Starts the service as a separate process (dist/core/main.js, every plugin) with `config`
 * written to its config file, on `port` (a free one by default); resolves once it listens.
 */
export async function spawnHost(id: string, config: Record<string, unknown>, port?: number): Promise<HostProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-cluster-'));
  const file = path.join(dataDir, 'config.json');
  port ??= await freePort();
  fs.writeFileSync(file, JSON.stringify(config));
  const proc = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, CONFIG_FILE: file }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  proc.stderr!.on('data', (d) => (out += String(d)));
  await eventually(() => out.includes('listening on') || proc.exitCode !== null, 60_000, `host ${id} to listen`);
  if (proc.exitCode !== null) throw new Error(`host ${id} exited with ${proc.exitCode}: ${out.slice(-2000)}`);
  return { proc, url: `http://127.0.0.1:${port}`, output: () => out };
}
