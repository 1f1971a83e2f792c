import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from './errors';

export interface Profile {
  url: string;
  token?: string;
  email?: string;
}

/** $XDG_CONFIG_HOME/pcctl/config.json, else ~/.config/pcctl/config.json ($HOME honoured). */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'pcctl', 'config.json');
}

export function readProfile(env: NodeJS.ProcessEnv = process.env): Profile | null {
  const file = configFile(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const p = JSON.parse(text) as Partial<Profile>;
    if (typeof p.url !== 'string') throw new Error('no "url"');
    return { url: p.url, token: typeof p.token === 'string' ? p.token : undefined, email: typeof p.email === 'string' ? p.email : undefined };
  } catch (err) {
    throw new CliError(EXIT.usage, `${file} is not a pcctl profile (${(err as Error).message}); run pcctl login again`);
  }
}

/** Writes the profile readable by its owner only: it holds a bearer token. */
export function writeProfile(p: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const file = configFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(p, null, 2) + '\n', { mode: 0o600 });
  // A file that existed with wider permissions keeps them through writeFileSync; rename does not.
  fs.renameSync(tmp, file);
  return file;
}

/** Where to connect and with what: PC_URL and PC_TOKEN win over the profile, flags over both. */
export function resolveTarget(flags: { url?: string }, env: NodeJS.ProcessEnv = process.env): { url: string; token: string | null } {
  const profile = readProfile(env);
  const url = flags.url ?? env.PC_URL ?? profile?.url;
  if (!url) throw new CliError(EXIT.usage, 'no service URL: set PC_URL, pass --url, or run pcctl login');
  try {
    new URL(url);
  } catch {
    throw new CliError(EXIT.usage, `not a URL: ${url}`);
  }
  return { url, token: env.PC_TOKEN ?? profile?.token ?? null };
}
