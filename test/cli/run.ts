import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** bin/pcctl at the repository root (tests run from dist/test/cli). */
export const PCCTL = path.resolve(__dirname, '../../../bin/pcctl');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A temporary home for the profile file: the CLI never touches the real ~/.config. */
export function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'pcctl-home-'));
}

/** Runs pcctl as a child process with exactly this environment (plus PATH), and stdin if given. */
export function pcctl(args: string[], env: Record<string, string>, stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PCCTL, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
