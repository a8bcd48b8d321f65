import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type WebSocket, WebSocketServer } from 'ws';
import { systemClock } from '../../core/clock.ts';
import { MEDIA_ADAPTERS } from '../carriers/index.ts';
import { DEFAULT_STREAM_LIMITS } from '../limits.ts';
import type { MediaHandlerFactory } from '../media-handler.ts';
import { MediaSession, type StreamSummary } from '../media-session.ts';
import { GatewayMetrics } from '../metrics.ts';
import { Pacer } from '../pacer.ts';
import type { StreamTokens } from '../tokens.ts';
import type { SendStatus, StreamTransport } from '../transport.ts';

/**
 * The comparison server of the gateway benchmark: the same MediaSession, adapters and handler as the gateway,
 * but over a plain `ws` WebSocketServer instead of uWebSockets.js (Twilio route only). Not for production.
 */

class WsTransport implements StreamTransport {
  constructor(private readonly ws: WebSocket) {}

  send(data: string | Uint8Array, binary: boolean): SendStatus {
    if (this.ws.readyState !== this.ws.OPEN) return 'dropped';
    this.ws.send(data, { binary });
    return this.ws.bufferedAmount > 0 ? 'buffered' : 'sent';
  }

  bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  cork(fn: () => void): void {
    fn();
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }
}

export interface WsBaseline {
  readonly port: number;
  readonly streams: number;
  summaries(): StreamSummary[];
  close(): Promise<void>;
}

export async function startWsBaseline(options: {
  host: string;
  port: number;
  tokens: StreamTokens;
  handlerFactory: MediaHandlerFactory;
  logger: Logger;
}): Promise<WsBaseline> {
  const metrics = new GatewayMetrics(new Registry());
  const pacer = new Pacer();
  const sessions = new Set<MediaSession>();
  const server = new WebSocketServer({
    host: options.host,
    port: options.port,
    path: '/media/twilio',
    perMessageDeflate: false,
    maxPayload: 64 * 1024,
  });
  server.on('connection', (ws) => {
    const session = new MediaSession({
      carrier: 'twilio',
      adapter: MEDIA_ADAPTERS.twilio({
        query: new URLSearchParams(),
        pathCallId: undefined,
        newStreamId: randomUUID,
      }),
      transport: new WsTransport(ws),
      tokens: options.tokens,
      handlerFactory: options.handlerFactory,
      metrics,
      pacer,
      logger: options.logger,
      clock: systemClock,
      limits: DEFAULT_STREAM_LIMITS,
      urlToken: undefined,
      statedCallId: undefined,
      onEnd: (s) => sessions.delete(s),
    });
    sessions.add(session);
    session.open();
    ws.on('message', (data: Buffer, isBinary: boolean) => session.receive(data, isBinary));
    ws.on('close', (code: number) => session.closed(code));
    ws.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return {
    port: (server.address() as AddressInfo).port,
    get streams() {
      return sessions.size;
    },
    summaries: () => [...sessions].map((session) => session.summary()),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        pacer.close();
        server.close(() => resolve());
      }),
  };
}
