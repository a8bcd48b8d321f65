import net from 'node:net';

/** One HTTP response as read off a socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

/** Parses every HTTP/1.1 response in `data` (Content-Length framed, as the API answers). */
export function parseResponses(data: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = data;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const text = rest.subarray(end + 4, end + 4 + length).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // left as text
    }
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body, text });
    rest = rest.subarray(end + 4 + length);
  }
  return out;
}

/** A raw connection to an HTTP server: write bytes when the test says, read what comes back until it closes. */
export class RawConnection {
  private readonly socket: net.Socket;
  private readonly received: Buffer[] = [];
  /** Resolves with everything received once the server closes the connection. */
  readonly closed: Promise<Buffer>;
  readonly connected: Promise<void>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = net.connect(Number(port), hostname);
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => this.received.push(chunk));
    this.closed = new Promise((resolve) => {
      this.socket.on('error', () => undefined);
      this.socket.on('close', () => resolve(Buffer.concat(this.received)));
    });
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Resolves once the responses received so far hold at least `count` complete ones. */
  async responses(count: number): Promise<RawResponse[]> {
    for (;;) {
      const parsed = parseResponses(Buffer.concat(this.received));
      if (parsed.length >= count || this.socket.closed) return parsed;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.socket.off('data', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('data', done);
        this.socket.on('close', done);
      });
    }
  }

  /** Half-closes: the server sees the end of the request stream. */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * Sends `data` on a fresh connection and resolves with the responses once the server closes it; with
 * `end`, the client also half-closes after sending (it will send nothing more).
 */
export async function exchange(
  url: string,
  data: string | Buffer,
  options: { end?: boolean } = {},
): Promise<RawResponse[]> {
  const connection = new RawConnection(url);
  await connection.connected;
  connection.write(data);
  if (options.end) connection.end();
  return parseResponses(await connection.closed);
}
