// A minimal HTTP/1.1 client for in-process latency figures. When the client runs in the
// same process as the server, its own CPU is counted in every sample; node:http's client
// (request object, header handling, stream machinery) costs about as much as the server
// work being measured. This one keeps one keep-alive socket, writes request bytes built
// once, and reads only the status line and where the body ends.
import net from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

export class LeanClient {
  private socket: net.Socket | null = null;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Where the body ends (bytes from the start of the response), once the headers are read. */
  private bodyEnd = -1;
  private chunked = false;
  private status = 0;
  private waiting: { resolve: (status: number) => void; reject: (err: Error) => void } | null = null;

  constructor(
    private readonly port: number,
    private readonly host = '127.0.0.1',
  ) {}

  /** Request bytes for one POST with a JSON body; built once and sent as often as needed. */
  static post(path: string, host: string, headers: Record<string, string>, body: string): Buffer {
    const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}`, 'Connection: keep-alive'];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
  }

  /** Sends one request; resolves with the response status once the whole response is in. */
  send(bytes: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.connected().write(bytes);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private connected(): net.Socket {
    if (this.socket) return this.socket;
    const s = net.connect(this.port, this.host);
    s.setNoDelay(true);
    s.on('data', (d: Buffer) => this.onData(d));
    const fail = (err: Error) => {
      this.socket = null;
      const w = this.waiting;
      this.waiting = null;
      w?.reject(err);
    };
    s.on('error', fail);
    s.on('close', () => fail(new Error('connection closed')));
    this.socket = s;
    return s;
  }

  private onData(d: Buffer): void {
    this.chunks.push(d);
    this.size += d.length;
    const all = this.chunks.length === 1 ? d : Buffer.concat(this.chunks, this.size);
    if (this.bodyEnd < 0 && !this.chunked && !this.readHead(all)) return;
    if (this.chunked ? !endsWith(all, CHUNKED_END) : this.size < this.bodyEnd) {
      this.chunks = [all];
      return;
    }
    // Requests are sequential: nothing follows the end of this response.
    this.chunks = [];
    this.size = 0;
    this.bodyEnd = -1;
    this.chunked = false;
    const w = this.waiting;
    this.waiting = null;
    w?.resolve(this.status);
  }

  /** Parses the status and framing headers; false while the head is incomplete. */
  private readHead(all: Buffer): boolean {
    const end = all.indexOf(HEADER_END);
    if (end < 0) return false;
    const head = all.toString('latin1', 0, end).toLowerCase();
    this.status = Number(head.slice(9, 12));
    const cl = head.indexOf('\r\ncontent-length:');
    if (cl >= 0) {
      this.bodyEnd = end + 4 + parseInt(head.slice(cl + 17, head.indexOf('\r\n', cl + 2) >>> 0), 10);
    } else if (head.includes('\r\ntransfer-encoding: chunked')) {
      this.chunked = true;
    } else {
      this.bodyEnd = end + 4;
    }
    return true;
  }
}

function endsWith(b: Buffer, tail: Buffer): boolean {
  if (b.length < tail.length) return false;
  return b.compare(tail, 0, tail.length, b.length - tail.length) === 0;
}
