/**
 * A customer's webhook endpoint for tests: a real HTTPS server on 127.0.0.1 (port 0) with a certificate from a
 * throwaway CA made by the `openssl` CLI. It verifies signatures the way a customer must (timestamp window, raw
 * bytes, constant-time compare: `verifySignature`), answers 401 to a bad signature, dedupes on the envelope `id`,
 * and can be told to answer 500, 401 or slowly for its next requests. For tests only.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SIGNATURE_HEADER, type VerifyResult, verifySignature } from '../signing.ts';

export interface TestCertificates {
  /** PEM of the CA that signed the server certificate (trust it to reach the receiver). */
  caPem: string;
  caFile: string;
  certPem: string;
  keyPem: string;
  cleanup(): void;
}

/** A CA and a server certificate for `localhost` and 127.0.0.1, valid for a day, in a temporary directory. */
export function makeCertificates(): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceagent-tls-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=voiceagent test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  fs.writeFileSync(
    file('server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'server.ext',
  );
  return {
    caPem: fs.readFileSync(file('ca.pem'), 'utf8'),
    caFile: file('ca.pem'),
    certPem: fs.readFileSync(file('server.pem'), 'utf8'),
    keyPem: fs.readFileSync(file('server.key'), 'utf8'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedRequest {
  /** The envelope id, when the body parsed. */
  id: string | undefined;
  raw: Buffer;
  headers: IncomingHttpHeaders;
  /** Verification against each secret the receiver knows, in the order given. */
  verified: VerifyResult[];
  /** The status the receiver answered (after a slow answer the client may have given up already). */
  answered: number;
  receivedAt: number;
}

/** What to do with one of the next requests instead of the normal answer. */
export type Misbehaviour = { status: number } | { delayMs: number };

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Envelope ids processed once each (dedupe), with the body first processed. */
  readonly processed = new Map<string, Buffer>();
  private readonly plan: Misbehaviour[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: https.Server,
    private readonly secrets: () => readonly string[],
    private readonly nowSecs: () => number,
  ) {}

  /** `secrets`: what the customer holds (either one verifying is enough, as during a rotation). */
  static async start(options: {
    certs: TestCertificates;
    secrets: () => readonly string[];
    nowMs?: () => number;
  }): Promise<WebhookReceiver> {
    const now = options.nowMs ?? Date.now;
    const server = https.createServer({ cert: options.certs.certPem, key: options.certs.keyPem });
    const receiver = new WebhookReceiver(server, options.secrets, () => Math.floor(now() / 1_000));
    server.on('request', (req, res) => {
      receiver.arrived++;
      receiver.wakeWaiters();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => void receiver.answer(Buffer.concat(chunks), req.headers, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(host: '127.0.0.1' | 'localhost' = '127.0.0.1'): string {
    return `https://${host}:${this.port}/hooks/calls`;
  }

  /** The next requests get these answers, in order, whatever their signature. */
  misbehave(...plan: Misbehaviour[]): void {
    this.plan.push(...plan);
  }

  /** Requests that reached the receiver, answered or not yet. */
  arrived = 0;

  /** Resolves once `count` requests have reached the receiver (before they are answered). */
  async waitForArrival(count: number): Promise<void> {
    while (this.arrived < count) {
      await new Promise<void>((resolve) => this.waiters.add(resolve));
    }
  }

  /** Resolves once `count` requests have been answered. */
  async waitFor(count: number): Promise<void> {
    while (this.requests.length < count) {
      await new Promise<void>((resolve) => this.waiters.add(resolve));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(raw: Buffer, headers: IncomingHttpHeaders, res: ServerResponse) {
    const header = headers[SIGNATURE_HEADER.toLowerCase()];
    const signature = Array.isArray(header) ? header[0] : header;
    const verified = this.secrets().map((secret) => verifySignature(signature, raw, secret, this.nowSecs()));
    let id: string | undefined;
    try {
      id = (JSON.parse(raw.toString('utf8')) as { id?: string }).id;
    } catch {
      id = undefined;
    }
    const step = this.plan.shift();
    let status = verified.some((v) => v.ok) ? 200 : 401;
    if (step && 'status' in step) status = step.status;
    if (step && 'delayMs' in step) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
    if (status === 200 && id !== undefined && !this.processed.has(id)) this.processed.set(id, raw);
    this.requests.push({ id, raw, headers, verified, answered: status, receivedAt: Date.now() });
    res.on('error', () => {});
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"received":true}');
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }
}
