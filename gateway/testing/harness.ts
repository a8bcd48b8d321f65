import { pino } from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { type Clock, systemClock } from '../../core/clock.ts';
import type { CarrierName } from '../carriers/types.ts';
import type { GatewayLimits } from '../limits.ts';
import type {
  MediaHandler,
  MediaHandlerFactory,
  PlaybackAck,
  StreamContext,
  StreamEnd,
} from '../media-handler.ts';
import type { StreamSummary } from '../media-session.ts';
import { type Gateway, type GatewayOptions, startGateway } from '../server.ts';
import { MemoryTokenClaims, StreamTokens } from '../tokens.ts';
import { echoHandler } from './echo-handler.ts';

/** Test support: a gateway on port 0 with captured logs, a WebSocket client that records, a recording handler. */

export const TEST_SECRET = 'gateway-test-secret-0123456789abcdef';

export interface TestGateway {
  readonly gateway: Gateway;
  readonly tokens: StreamTokens;
  readonly registry: Registry;
  /** Every log line the gateway wrote (JSON). */
  readonly logLines: string[];
  url(path: string): string;
  http(path: string): string;
  mint(callId: string, carrier: CarrierName, ttlMs?: number): string;
  close(): Promise<void>;
}

export async function startTestGateway(
  options: {
    handlerFactory?: MediaHandlerFactory;
    limits?: Partial<GatewayLimits>;
    clock?: Clock;
    endedCallEvent?: GatewayOptions['endedCallEvent'];
  } = {},
): Promise<TestGateway> {
  const clock = options.clock ?? systemClock;
  const registry = new Registry();
  const logLines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const tokens = new StreamTokens({ secret: TEST_SECRET, claims: new MemoryTokenClaims(clock), clock });
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    allowFallback: false,
    tokens,
    handlerFactory: options.handlerFactory ?? echoHandler,
    registry,
    logger,
    clock,
    limits: options.limits,
    ...(options.endedCallEvent ? { endedCallEvent: options.endedCallEvent } : {}),
  });
  return {
    gateway,
    tokens,
    registry,
    logLines,
    url: (path) => `ws://127.0.0.1:${gateway.port}${path}`,
    http: (path) => `http://127.0.0.1:${gateway.port}${path}`,
    mint: (callId, carrier, ttlMs = 60_000) => tokens.mint(callId, carrier, ttlMs),
    close: () => gateway.close(),
  };
}

export interface Received {
  readonly binary: boolean;
  readonly text: string;
  readonly bytes: Buffer;
}

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

/** A WebSocket client that keeps everything it receives, for byte-level assertions. */
export class TestClient {
  readonly received: Received[] = [];
  readonly closed: Promise<Closed>;
  private readonly listeners = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.received.push({ binary: isBinary, text: isBinary ? '' : data.toString('utf8'), bytes: data });
      for (const listener of this.listeners) listener();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code: number, reason: Buffer) => {
        resolve({ code, reason: reason.toString('utf8') });
        for (const listener of this.listeners) listener();
      });
    });
    ws.on('error', () => {});
  }

  static open(url: string): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new TestClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  sendBinary(bytes: Uint8Array): void {
    this.ws.send(bytes, { binary: true });
  }

  /** Text messages parsed as JSON. */
  json(): Record<string, unknown>[] {
    return this.received.filter((m) => !m.binary).map((m) => JSON.parse(m.text) as Record<string, unknown>);
  }

  binaries(): Buffer[] {
    return this.received.filter((m) => m.binary).map((m) => m.bytes);
  }

  /** Resolves once `predicate` holds (checked on every message and on close); rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}; received ${this.received.length} messages`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  close(code = 1000): void {
    this.ws.close(code);
  }
}

export type RecordedEvent =
  | { type: 'start'; ctx: StreamContext }
  | { type: 'dtmf'; digit: string; durationMs: number | undefined }
  | { type: 'ack'; ack: PlaybackAck }
  | { type: 'stop'; end: StreamEnd };

/** The echo handler, recording every call it gets (frames are counted, not kept). */
export function recordingEcho(events: RecordedEvent[], counts = { frames: 0 }): MediaHandlerFactory {
  return (ctx): MediaHandler => {
    const echo = echoHandler(ctx);
    return {
      onStart() {
        events.push({ type: 'start', ctx });
      },
      onAudio(frame) {
        counts.frames++;
        echo.onAudio(frame);
      },
      onDtmf(digit, durationMs) {
        events.push({ type: 'dtmf', digit, durationMs });
        echo.onDtmf?.(digit, durationMs);
      },
      onPlaybackAck(ack) {
        events.push({ type: 'ack', ack });
      },
      onStop(end) {
        events.push({ type: 'stop', end });
      },
    };
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The summary of the stream of `callId` once it has ended (the server learns of a client's close a bit later). */
export async function waitForSummary(
  gw: TestGateway,
  callId: string,
  timeoutMs = 5000,
): Promise<StreamSummary> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const summary = gw.gateway.stats().recent.find((s) => s.callId === callId);
    if (summary) return summary;
    await sleep(10);
  }
  throw new Error(`no ended stream for ${callId}`);
}
