import type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket,
} from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type Clock, systemClock } from '../core/clock.ts';
import { ListenError } from '../core/listen-error.ts';
import { MEDIA_ADAPTERS } from './carriers/index.ts';
import type { CarrierName } from './carriers/types.ts';
import type { MediaHandlerFactory, StreamEvent } from './handler.ts';
import { DEFAULT_GATEWAY_LIMITS, type GatewayLimits } from './limits.ts';
import { MediaSession, type StreamSummary } from './media-session.ts';
import { GatewayMetrics } from './metrics.ts';
import { Pacer } from './pacer.ts';
import { loadStaticFiles, STATIC_PREFIX } from './static.ts';
import type { StreamTokens, TokenVerdict } from './tokens.ts';
import { loadUws } from './uws.ts';
import { UwsTransport } from './uws-transport.ts';

/**
 * The media gateway: uWebSockets.js serving the carriers' media streams, browser web calls, `/healthz` and the
 * browser client. Refuses to start on the package's JavaScript fallback unless `allowFallback`
 * (GATEWAY_ALLOW_FALLBACK=1): the fallback carries a fraction of the streams.
 *
 * Routes (WebSocket): /media/twilio, /media/exotel, /media/plivo, /media/vonage, /web/{call_id}. Each has its
 * own `maxPayloadLength` (a bigger message drops the connection without a close frame: 1006) and `idleTimeout` (no message
 * either way for that long closes it: dead peers and slowloris; the start timeout covers peers that only
 * answer pings). HTTP: GET /healthz, GET /web/static/{index.html,client.js,worklet.js}, GET / -> demo page.
 */

const ROUTE_PATHS: Readonly<Record<CarrierName, string>> = {
  twilio: '/media/twilio',
  exotel: '/media/exotel',
  plivo: '/media/plivo',
  vonage: '/media/vonage',
  web: '/web/:call_id',
};

export interface GatewayOptions {
  readonly host: string;
  readonly port: number;
  readonly allowFallback: boolean;
  /**
   * Share the port with other processes (SO_REUSEPORT). Off, the port is this gateway's alone: a second process
   * on it fails to listen instead of silently taking a share of the streams.
   */
  readonly reusePort?: boolean;
  readonly tokens: StreamTokens;
  readonly handlerFactory: MediaHandlerFactory;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Overrides of the defaults above (tests shorten timeouts). */
  readonly limits?: Partial<GatewayLimits>;
  /**
   * How an ended call went, for a browser whose genuine token was refused as expired or used: told before
   * the socket closes (undefined while the call can still go on).
   */
  readonly endedCallEvent?: (callId: string) => Promise<StreamEvent | undefined>;
}

export interface GatewayStats {
  /** Whether uWebSockets.js runs its native binary. */
  readonly native: boolean;
  readonly activeStreams: number;
  readonly openedStreams: number;
  /** Summaries of the open streams. */
  readonly streams: StreamSummary[];
  /** Summaries of the most recently ended streams, newest first. */
  readonly recent: StreamSummary[];
}

export interface Gateway {
  readonly port: number;
  /**
   * Stops taking new streams: the listening socket closes (a balancer in front moves new streams to other
   * gateways) while the streams already open carry on.
   */
  stopAccepting(): void;
  close(): Promise<void>;
  stats(): GatewayStats;
}

export class FallbackRefusedError extends Error {
  override name = 'FallbackRefusedError';
}

/** uWS listen options (the package's `ListenOptions` enum is a type only). */
const LISTEN_DEFAULT = 0;
const LISTEN_EXCLUSIVE_PORT = 1;

/** Per-socket data, filled synchronously in `upgrade` (the request object dies when it returns). */
export interface SocketData {
  readonly carrier: CarrierName;
  readonly query: string;
  readonly pathCallId: string | undefined;
  readonly statedCallId: string | undefined;
  urlToken: TokenVerdict | undefined;
  /** For a browser refused on an ended call's token: how the call ended. */
  endedCall: StreamEvent | undefined;
  session: MediaSession | undefined;
  transport: UwsTransport | undefined;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { uws, native } = loadUws();
  const log = options.logger.child({ component: 'gateway' });
  if (!native) {
    if (!options.allowFallback) {
      throw new FallbackRefusedError(
        'uWebSockets.js loaded its slow JavaScript fallback, not the native binary; set GATEWAY_ALLOW_FALLBACK=1 to run anyway',
      );
    }
    log.warn('uWebSockets.js runs its JavaScript fallback: expect a fraction of the native capacity');
  }
  const limits: GatewayLimits = { ...DEFAULT_GATEWAY_LIMITS, ...options.limits };
  for (const [carrier, route] of Object.entries(limits.routes)) {
    // uWS aborts the whole process (not an exception) on an idle timeout between 1 and 8 s.
    if (!Number.isInteger(route.idleTimeoutS) || (route.idleTimeoutS !== 0 && route.idleTimeoutS < 8)) {
      throw new RangeError(`${carrier}: idleTimeoutS must be 0 or an integer of at least 8`);
    }
    if (!Number.isInteger(route.maxPayloadLength) || route.maxPayloadLength < 1024) {
      throw new RangeError(`${carrier}: maxPayloadLength must be an integer of at least 1024`);
    }
  }
  const clock = options.clock ?? systemClock;
  const metrics = new GatewayMetrics(options.registry);
  metrics.native.set(native ? 1 : 0);
  const pacer = new Pacer();
  const sessions = new Set<MediaSession>();
  const recent: StreamSummary[] = [];
  const files = loadStaticFiles();
  let opened = 0;
  let closing = false;

  const onEnd = (session: MediaSession): void => {
    sessions.delete(session);
    recent.unshift(session.summary());
    if (recent.length > limits.recentStreams) recent.length = limits.recentStreams;
  };

  // An exception escaping a uWS callback would take the process down with every other call on it; the session
  // already contains its own failures, this is the last line.
  const guard = (where: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      log.error({ err, where }, 'gateway callback failed');
    }
  };

  const upgrade = (
    carrier: CarrierName,
    res: HttpResponse,
    req: HttpRequest,
    context: us_socket_context_t,
  ): void => {
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const params = new URLSearchParams(req.getQuery() ?? '');
    const pathCallId = carrier === 'web' ? safeDecode(req.getParameter(0)) : undefined;
    const token = params.get('token') ?? undefined;
    params.delete('token');
    const data: SocketData = {
      carrier,
      query: params.toString(),
      pathCallId,
      statedCallId: pathCallId ?? params.get('call_id') ?? undefined,
      urlToken: undefined,
      endedCall: undefined,
      session: undefined,
      transport: undefined,
    };
    if (closing) {
      res.writeStatus('503 Service Unavailable').end();
      return;
    }
    if (token === undefined) {
      res.upgrade(data, key, protocol, extensions, context);
      return;
    }
    // The URL token is checked before the socket opens (the check may go to the coordinator): the request may
    // be aborted meanwhile, and the late upgrade must be corked.
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    options.tokens
      .verify(token, carrier, data.statedCallId)
      .catch((): TokenVerdict => ({ ok: false, reason: 'check_failed' }))
      .then(async (verdict) => {
        data.urlToken = verdict;
        if (!verdict.ok && verdict.callId !== undefined && verdict.callId === data.pathCallId) {
          data.endedCall = await options.endedCallEvent?.(verdict.callId).catch(() => undefined);
        }
        if (aborted) return;
        res.cork(() => res.upgrade(data, key, protocol, extensions, context));
      });
  };

  const open = (ws: WebSocket<SocketData>): void => {
    const data = ws.getUserData();
    const transport = new UwsTransport(ws);
    const adapter = MEDIA_ADAPTERS[data.carrier]({
      query: new URLSearchParams(data.query),
      pathCallId: data.pathCallId,
      newStreamId: randomUUID,
    });
    const session = new MediaSession({
      carrier: data.carrier,
      adapter,
      transport,
      tokens: options.tokens,
      handlerFactory: options.handlerFactory,
      metrics,
      pacer,
      logger: log,
      clock,
      limits,
      urlToken: data.urlToken,
      endedCall: data.endedCall,
      statedCallId: data.statedCallId,
      onEnd,
    });
    data.transport = transport;
    data.session = session;
    sessions.add(session);
    opened++;
    session.open();
  };

  const app: TemplatedApp = uws.App();
  for (const carrier of Object.keys(ROUTE_PATHS) as CarrierName[]) {
    const route = limits.routes[carrier];
    app.ws<SocketData>(ROUTE_PATHS[carrier], {
      compression: uws.DISABLED,
      maxPayloadLength: route.maxPayloadLength,
      idleTimeout: route.idleTimeoutS,
      maxBackpressure: limits.maxBackpressureBytes,
      sendPingsAutomatically: false,
      upgrade: (res, req, context) => upgrade(carrier, res, req, context),
      open: (ws) => guard('open', () => open(ws)),
      message: (ws, message, isBinary) =>
        guard('message', () => ws.getUserData().session?.receive(new Uint8Array(message), isBinary)),
      drain: (ws) => guard('drain', () => ws.getUserData().session?.drain()),
      close: (ws, code) =>
        guard('close', () => {
          const data = ws.getUserData();
          data.transport?.markClosed();
          data.session?.closed(code);
        }),
    });
  }

  app.get('/healthz', (res) => {
    const body = JSON.stringify({ status: closing ? 'closing' : 'ok', native, streams: sessions.size });
    res.writeStatus(closing ? '503 Service Unavailable' : '200 OK');
    res.writeHeader('content-type', 'application/json').end(body);
  });
  app.get(`${STATIC_PREFIX}:file`, (res, req) => {
    const file = files.get(req.getParameter(0) ?? '');
    if (!file) {
      res.writeStatus('404 Not Found').end('not found');
      return;
    }
    res.writeHeader('content-type', file.contentType).writeHeader('cache-control', 'no-cache').end(file.body);
  });
  app.get('/', (res) => {
    res.writeStatus('302 Found').writeHeader('location', `${STATIC_PREFIX}index.html`).end();
  });
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').end('not found');
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    // The host + options form exists on the native app and the fallback but is missing from the typings.
    const listen = app.listen as unknown as (
      host: string,
      port: number,
      listenOptions: number,
      cb: (socket: us_listen_socket | false) => void,
    ) => TemplatedApp;
    listen.call(
      app,
      options.host,
      options.port,
      options.reusePort ? LISTEN_DEFAULT : LISTEN_EXCLUSIVE_PORT,
      (socket) => {
        if (socket) resolve(socket);
        else
          reject(
            new ListenError(
              `media gateway could not listen on ${options.host}:${options.port}: the port is in use (another server?) or the address is not this machine's`,
            ),
          );
      },
    );
  });
  const port = uws.us_socket_local_port(listenSocket);

  const housekeeping = setInterval(() => {
    const now = performance.now();
    for (const session of sessions) session.housekeeping(now);
  }, limits.housekeepingMs);
  housekeeping.unref();

  let accepting = true;
  const stopAccepting = (): void => {
    if (!accepting) return;
    accepting = false;
    uws.us_listen_socket_close(listenSocket);
  };

  return {
    port,
    stats: () => ({
      native,
      activeStreams: sessions.size,
      openedStreams: opened,
      streams: [...sessions].map((s) => s.summary()),
      recent: [...recent],
    }),
    stopAccepting,
    close: async () => {
      if (closing) return;
      closing = true;
      stopAccepting();
      for (const session of [...sessions]) session.close('going_away');
      clearInterval(housekeeping);
      pacer.close();
      // Let the close frames go out before the app tears down what is left.
      await new Promise((resolve) => setTimeout(resolve, 20));
      // `close` exists on the native app (uWS >= 20.26) but is missing from the package's typings.
      (app as TemplatedApp & { close(): void }).close();
      log.info({ port }, 'media gateway closed');
    },
  };
}

function safeDecode(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
