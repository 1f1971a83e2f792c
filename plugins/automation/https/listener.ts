import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../../core/config';
import { nowIso, type Db } from '../../../core/db';
import { Unavailable } from '../../../core/errors';
import type { Lifecycle } from '../../../core/lifecycle';
import type { Logger } from '../../../core/logger';
import type { Certificates, CertRow } from '../certs/service';

/**
 * The service's own TLS listener: the same request listener as the HTTP port, behind a
 * certificate this plugin provisioned. A renewed certificate is swapped in with
 * setSecureContext: open connections keep their session, new handshakes get the new one.
 */
export class HttpsListener {
  private server: https.Server | null = null;
  private cert: CertRow | null = null;
  readonly counters = { handshakes: 0, failures: 0, reloads: 0, last_failure: null as string | null };
  private startedAt: string | null = null;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly lifecycle: Lifecycle,
    private readonly certs: Certificates,
    private readonly log: Logger,
  ) {
    certs.renewedListeners.push((row) => this.reload(row));
  }

  get running(): boolean {
    return this.server !== null;
  }

  get port(): number | null {
    return (this.server?.address() as AddressInfo | null)?.port ?? null;
  }

  get certificate(): CertRow | null {
    return this.cert;
  }

  private context(row: CertRow) {
    return { cert: [row.cert_pem!, row.chain_pem ?? ''].map((p) => p.trim()).filter(Boolean).join('\n'), key: this.certs.keyPem(row), minVersion: 'TLSv1.2' as const };
  }

  /** Starts (or, when running, switches the certificate of) the listener. */
  async enable(row: CertRow): Promise<void> {
    if (this.server) {
      this.reload(row, true);
      return;
    }
    const app = this.lifecycle.app;
    if (!app) throw new Unavailable('The HTTP application is not built yet; try again when the host is running');
    const server = https.createServer({ ...this.context(row), IncomingMessage: app.IncomingMessage, ServerResponse: app.ServerResponse, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, app);
    server.on('secureConnection', () => this.counters.handshakes++);
    server.on('tlsClientError', (err: Error) => {
      this.counters.failures++;
      this.counters.last_failure = err.message;
    });
    const { port } = this.config.automation.https;
    const host = this.config.automation.https.host ?? this.config.server.host;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.cert = row;
    this.startedAt = nowIso();
    this.log.info({ port: this.port, cert: row.id }, 'HTTPS listener started');
  }

  /** A renewal of the served certificate (or enable with another one) swaps the secure context. */
  reload(row: CertRow, switching = false): void {
    if (!this.server || (!switching && this.cert?.id !== row.id)) return;
    this.server.setSecureContext(this.context(row));
    this.cert = row;
    this.counters.reloads++;
  }

  async disable(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, 2000).unref();
    });
  }

  /** Follows the stored setting (at start, and when another host changed it). */
  async sync(): Promise<void> {
    const row = await this.db('automation_https').where({ id: 'main' }).first();
    if (!row?.enabled || !row.cert_id) return;
    const cert = await this.certs.get(null, row.cert_id as string);
    if (cert.state === 'active') await this.enable(cert);
  }

  status() {
    return { running: this.running, port: this.port, started_at: this.startedAt, certificate_id: this.cert?.id ?? null, ...this.counters };
  }
}

