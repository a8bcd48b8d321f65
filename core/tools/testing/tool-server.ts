/**
 * A customer's API for tool tests: a real HTTPS server on 127.0.0.1 (port 0, certificate from the test CA) that
 * records every request (method, path, headers, raw body) and answers by a handler the test sets per path.
 */
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TestCertificates } from '../../events/testing/receiver.ts';

export interface ToolRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ToolAnswer {
  status?: number;
  json?: unknown;
  delayMs?: number;
}

export class ToolServer {
  readonly requests: ToolRequest[] = [];
  private readonly handlers = new Map<string, (request: ToolRequest) => ToolAnswer>();

  private constructor(private readonly server: https.Server) {}

  static async start(certs: TestCertificates): Promise<ToolServer> {
    let self: ToolServer | undefined;
    const server = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'https://localhost');
        const recorded: ToolRequest = {
          method: req.method ?? 'GET',
          path: `${url.pathname}${url.search}`,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        self?.requests.push(recorded);
        const answer = self?.handlers.get(url.pathname)?.(recorded) ?? {
          status: 404,
          json: { error: 'no handler' },
        };
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer.json ?? {}));
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new ToolServer(server);
    return self;
  }

  /** `https://127.0.0.1:<port><path>` */
  url(path: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  on(path: string, handler: (request: ToolRequest) => ToolAnswer): void {
    this.handlers.set(path, handler);
  }

  requestsTo(path: string): ToolRequest[] {
    return this.requests.filter((r) => r.path.split('?')[0] === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
