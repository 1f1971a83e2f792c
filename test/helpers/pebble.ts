import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually';

/** A free TCP port on loopback (closed again before it is handed out). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Pebble {
  directoryUrl: string;
  /** PEM of the certificate pebble serves its ACME API with (trust it to reach the API). */
  caFile: string;
  listenPort: number;
  start(httpPort: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Debian's pebble (a real ACME server, test/tools/services.sh installs it) on loopback, with a
 * config of its own. Its HTTP-01 validations go to `httpPort` on the names asked, so the
 * service under test answers them itself. The ports are chosen first so that the host's
 * config can name the directory before pebble runs.
 */
export async function preparePebble(): Promise<Pebble> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pebble-'));
  const caFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', caFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  const listenPort = await freePort();
  const mgmtPort = await freePort();
  const tlsPort = await freePort();
  let child: ChildProcess | null = null;
  return {
    directoryUrl: `https://127.0.0.1:${listenPort}/dir`,
    caFile,
    listenPort,
    async start(httpPort: number) {
      const cfg = {
        pebble: {
          listenAddress: `127.0.0.1:${listenPort}`,
          managementListenAddress: `127.0.0.1:${mgmtPort}`,
          certificate: caFile,
          privateKey: keyFile,
          httpPort,
          tlsPort,
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      };
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(cfg));
      child = spawn('pebble', ['-config', path.join(dir, 'config.json'), '-strict=false'], {
        env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      child.stdout?.on('data', (d) => (log += d));
      child.stderr?.on('data', (d) => (log += d));
      await eventually(async () => log.includes('Listening on'), 10_000).catch(() => {
        throw new Error(`pebble did not start: ${log}`);
      });
    },
    async stop() {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
