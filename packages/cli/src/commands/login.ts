import fs from 'node:fs';
import readline from 'node:readline';
import { createClient } from '@platform-control/client';
import { Command } from 'commander';
import { configFile, readProfile, writeProfile } from '../config';
import { call } from '../context';
import { CliError, EXIT } from '../errors';
import { json, out } from '../output';

/** Asks on the terminal without echoing what is typed. */
function askHidden(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const io = rl as unknown as { _writeToOutput: (s: string) => void };
  let asked = false;
  io._writeToOutput = (s: string) => {
    if (!asked) process.stderr.write(s);
    asked = true;
  };
  return new Promise((resolve) => rl.question(question, (answer) => (rl.close(), process.stderr.write('\n'), resolve(answer))));
}

async function password(fromStdin: boolean): Promise<string> {
  if (fromStdin) return fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (process.env.PC_PASSWORD) return process.env.PC_PASSWORD;
  if (!process.stdin.isTTY) throw new CliError(EXIT.usage, 'no password: use --password-stdin or PC_PASSWORD when stdin is not a terminal');
  return askHidden('Password: ');
}

export function loginCommand(): Command {
  return new Command('login')
    .description(`log in and save the URL and token in the profile (${configFile()}, mode 0600)`)
    .requiredOption('--email <email>', 'account e-mail')
    .option('--password-stdin', 'read the password from stdin (else PC_PASSWORD, else a prompt)')
    .action(async (o: { email: string; passwordStdin?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<{ url?: string; output?: string }>();
      const url = g.url ?? process.env.PC_URL ?? readProfile()?.url;
      if (!url) throw new CliError(EXIT.usage, 'no service URL: pass --url or set PC_URL');
      const pw = await password(Boolean(o.passwordStdin));
      const res = await call(createClient({ baseUrl: url }).POST('/auth/login', { body: { email: o.email, password: pw } }));
      const file = writeProfile({ url, token: res.access_token, email: o.email });
      const summary = { url, email: o.email, role: res.user.role, tenant_id: res.user.tenant_id, expires_in: res.expires_in, profile: file };
      if (g.output === 'json') json(summary);
      else out(`logged in to ${url} as ${o.email} (${res.user.role}); token saved in ${file}\n`);
    });
}
