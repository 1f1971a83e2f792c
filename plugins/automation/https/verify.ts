
import tls from 'node:tls';

export interface VerifyResult {
  host: string;
  port: number;
  servername: string | null;
  ok: boolean;
  authorized: boolean;
  authorization_error: string | null;
  protocol: string | null;
  cipher: string | null;
  handshake_ms: number | null;
  names: string[];
  days_left: number | null;
  chain: Array<{ subject: string; issuer: string; serial: string; not_before: string; not_after: string; fingerprint_sha256: string }>;
  error: string | null;
}

/**
 * A real TLS handshake against host:port. The chain is checked against the system's roots
 * plus `ca` (our local CA), and `authorized` says whether it verified for `servername`.
 */
export function verifyTls(target: { host: string; port: number; servername?: string | null }, ca: string[], timeoutMs: number, now: Date): Promise<VerifyResult> {
  const servername = target.servername ?? (net(target.host) ? null : target.host);
  const base: VerifyResult = {
    host: target.host, port: target.port, servername, ok: false, authorized: false, authorization_error: null, protocol: null, cipher: null, handshake_ms: null, names: [], days_left: null, chain: [], error: null,
  };
  return new Promise((resolve) => {
    const t0 = performance.now();
    const socket = tls.connect({ host: target.host, port: target.port, servername: servername ?? undefined, ca: [...tls.rootCertificates, ...ca], rejectUnauthorized: false, timeout: timeoutMs });
    const done = (r: VerifyResult) => {
      socket.destroy();
      resolve(r);
    };
    socket.once('secureConnect', () => {
      const ms = Math.round((performance.now() - t0) * 1000) / 1000;
      const chain: VerifyResult['chain'] = [];
      const leaf = socket.getPeerX509Certificate();
      let peer = leaf;
      const seen = new Set<string>();
      while (peer && !seen.has(peer.fingerprint256)) {
        seen.add(peer.fingerprint256);
        chain.push({ subject: peer.subject, issuer: peer.issuer, serial: peer.serialNumber, not_before: new Date(peer.validFrom).toISOString(), not_after: new Date(peer.validTo).toISOString(), fingerprint_sha256: peer.fingerprint256 });
        peer = peer.issuerCertificate;
      }
      let authError = socket.authorizationError ? String(socket.authorizationError) : null;
      // Node checks the chain; the name is checked here (an IP target against its IP SANs).
      if (!authError && leaf) {
        const nameOk = servername ? leaf.checkHost(servername) : leaf.checkIP(target.host);
        if (!nameOk) authError = `the certificate is not valid for ${servername ?? target.host}`;
      }
      done({
        ...base,
        ok: true,
        authorized: !authError,
        authorization_error: authError,
        protocol: socket.getProtocol(),
        cipher: socket.getCipher()?.name ?? null,
        handshake_ms: ms,
        names: leaf ? (leaf.subjectAltName ?? '').split(',').map((s) => s.trim()).filter(Boolean) : [],
        days_left: leaf ? Math.floor(((Date.parse(leaf.validTo) - now.getTime()) / 86400_000) * 100) / 100 : null,
        chain,
      });
    });
    socket.once('timeout', () => done({ ...base, error: `no TLS handshake within ${timeoutMs} ms` }));
    socket.once('error', (err) => done({ ...base, error: err.message }));
  });
}

function net(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

