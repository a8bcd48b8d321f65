import type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket,
  WebSocketBehavior,
} from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type Clock, systemClock } from '../core/clock.ts';
import { ListenError } from '../core/listen-error.ts';
import { LIVE_STT_PATH } from '../core/speech/languages.ts';
import { MEDIA_ADAPTERS } from './carriers/index.ts';
import type { CarrierName } from './carriers/types.ts';
import { DEFAULT_GATEWAY_LIMITS, type GatewayLimits } from './limits.ts';
import type { MediaHandlerFactory, StreamEvent } from './media-handler.ts';
import { MediaSession, type StreamSummary } from './media-session.ts';
import { GatewayMetrics } from './metrics.ts';
import { Pacer } from './pacer.ts';
import { liveTranscriptionRoute } from './speech/route.ts';
import type { LiveTranscriptionService } from './speech/service.ts';
import { loadStaticFiles, STATIC_PREFIX, type StaticFile } from './static.ts';
import type { StreamTokens, TokenVerdict } from './tokens.ts';
import { loadUws, type UwsModule } from './uws.ts';
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
  /** Live speech to text at /v1/audio/transcriptions/stream (gateway/speech/PROTOCOL.md); off when unset. */
  readonly liveTranscription?: LiveTranscriptionService;
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
  refuseSlowFallback(native, options.allowFallback, log);
  const limits = gatewayLimits(options.limits);
  const metrics = new GatewayMetrics(options.registry);
  metrics.native.set(native ? 1 : 0);
  const streams = new GatewayStreams(options, limits, metrics, log);
  const app: TemplatedApp = uws.App();
  for (const carrier of Object.keys(ROUTE_PATHS) as CarrierName[]) {
    app.ws<SocketData>(ROUTE_PATHS[carrier], mediaRoute(uws, carrier, limits, streams, log));
  }
  if (options.liveTranscription) {
    app.ws(
      LIVE_STT_PATH,
      liveTranscriptionRoute(uws, options.liveTranscription, () => streams.closing, log),
    );
  }
  for (const route of httpRoutes(streams, native, loadStaticFiles()))
    app[route.method](route.path, route.handle);
  const listenSocket = await listen(app, options);
  const port = uws.us_socket_local_port(listenSocket);
  const housekeeping = setInterval(() => streams.housekeeping(), limits.housekeepingMs);
  housekeeping.unref();

  let accepting = true;
  const stopAccepting = (): void => {
    if (!accepting) return;
    accepting = false;
    uws.us_listen_socket_close(listenSocket);
  };
  return {
    port,
    stats: () => streams.stats(native),
    stopAccepting,
    close: async () => {
      if (streams.closing) return;
      streams.closing = true;
      stopAccepting();
      streams.closeAll();
      await options.liveTranscription?.closeAll();
      clearInterval(housekeeping);
      // Let the close frames go out before the app tears down what is left.
      await new Promise((resolve) => setTimeout(resolve, 20));
      // `close` exists on the native app (uWS >= 20.26) but is missing from the package's typings.
      (app as TemplatedApp & { close(): void }).close();
      log.info({ port }, 'media gateway closed');
    },
  };
}

function refuseSlowFallback(native: boolean, allowFallback: boolean, log: Logger): void {
  if (native) return;
  if (!allowFallback) {
    throw new FallbackRefusedError(
      'uWebSockets.js loaded its slow JavaScript fallback, not the native binary; set GATEWAY_ALLOW_FALLBACK=1 to run anyway',
    );
  }
  log.warn('uWebSockets.js runs its JavaScript fallback: expect a fraction of the native capacity');
}

/** The defaults with the caller's overrides, refused when uWS would misbehave on them. */
export function gatewayLimits(overrides: Partial<GatewayLimits> | undefined): GatewayLimits {
  const limits: GatewayLimits = { ...DEFAULT_GATEWAY_LIMITS, ...overrides };
  for (const [carrier, route] of Object.entries(limits.routes)) {
    // uWS aborts the whole process (not an exception) on an idle timeout between 1 and 8 s.
    if (!Number.isInteger(route.idleTimeoutS) || (route.idleTimeoutS !== 0 && route.idleTimeoutS < 8)) {
      throw new RangeError(`${carrier}: idleTimeoutS must be 0 or an integer of at least 8`);
    }
    if (!Number.isInteger(route.maxPayloadLength) || route.maxPayloadLength < 1024) {
      throw new RangeError(`${carrier}: maxPayloadLength must be an integer of at least 1024`);
    }
  }
  return limits;
}

/** The open media streams of one gateway: how a socket becomes a session, and what is left when it ends. */
class GatewayStreams {
  readonly sessions = new Set<MediaSession>();
  private readonly recent: StreamSummary[] = [];
  private readonly pacer = new Pacer();
  private readonly clock: Clock;
  private opened = 0;
  closing = false;

  constructor(
    private readonly options: GatewayOptions,
    private readonly limits: GatewayLimits,
    private readonly metrics: GatewayMetrics,
    private readonly log: Logger,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Reads what the socket needs from the request (which dies when this returns), and checks a URL token before
   * the socket opens (the check may go to the coordinator): the request may be aborted meanwhile, and the late
   * upgrade must be corked.
   */
  upgrade(carrier: CarrierName, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const { data, token } = socketDataOf(carrier, req);
    if (this.closing) {
      res.writeStatus('503 Service Unavailable').end();
      return;
    }
    if (token === undefined) {
      res.upgrade(data, key, protocol, extensions, context);
      return;
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    this.checkUrlToken(data, token).then(() => {
      if (aborted) return;
      res.cork(() => res.upgrade(data, key, protocol, extensions, context));
    });
  }

  private async checkUrlToken(data: SocketData, token: string): Promise<void> {
    const verdict = await this.options.tokens
      .verify(token, data.carrier, data.statedCallId)
      .catch((): TokenVerdict => ({ ok: false, reason: 'check_failed' }));
    data.urlToken = verdict;
    if (!verdict.ok && verdict.callId !== undefined && verdict.callId === data.pathCallId) {
      data.endedCall = await this.options.endedCallEvent?.(verdict.callId).catch(() => undefined);
    }
  }

  open(ws: WebSocket<SocketData>): void {
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
      tokens: this.options.tokens,
      handlerFactory: this.options.handlerFactory,
      metrics: this.metrics,
      pacer: this.pacer,
      logger: this.log,
      clock: this.clock,
      limits: this.limits,
      urlToken: data.urlToken,
      endedCall: data.endedCall,
      statedCallId: data.statedCallId,
      onEnd: (ended) => this.ended(ended),
    });
    data.transport = transport;
    data.session = session;
    this.sessions.add(session);
    this.opened++;
    session.open();
  }

  private ended(session: MediaSession): void {
    this.sessions.delete(session);
    this.recent.unshift(session.summary());
    if (this.recent.length > this.limits.recentStreams) this.recent.length = this.limits.recentStreams;
  }

  housekeeping(): void {
    const now = performance.now();
    for (const session of this.sessions) session.housekeeping(now);
  }

  closeAll(): void {
    for (const session of [...this.sessions]) session.close('going_away');
    this.pacer.close();
  }

  stats(native: boolean): GatewayStats {
    return {
      native,
      activeStreams: this.sessions.size,
      openedStreams: this.opened,
      streams: [...this.sessions].map((s) => s.summary()),
      recent: [...this.recent],
    };
  }
}

function socketDataOf(
  carrier: CarrierName,
  req: HttpRequest,
): { data: SocketData; token: string | undefined } {
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
  return { data, token };
}

/** One carrier's WebSocket route: its limits, and every callback guarded. */
function mediaRoute(
  uws: UwsModule,
  carrier: CarrierName,
  limits: GatewayLimits,
  streams: GatewayStreams,
  log: Logger,
): WebSocketBehavior<SocketData> {
  // An exception escaping a uWS callback would take the process down with every other call on it; the session
  // already contains its own failures, this is the last line.
  const guard = (where: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      log.error({ err, where }, 'gateway callback failed');
    }
  };
  const route = limits.routes[carrier];
  return {
    compression: uws.DISABLED,
    maxPayloadLength: route.maxPayloadLength,
    idleTimeout: route.idleTimeoutS,
    maxBackpressure: limits.maxBackpressureBytes,
    sendPingsAutomatically: false,
    upgrade: (res, req, context) => streams.upgrade(carrier, res, req, context),
    open: (ws) => guard('open', () => streams.open(ws)),
    // Fifty a second per stream: guarded inline, without a closure per message. The message as a Buffer view
    // (no copy), which the JSON carriers' media-message scanner reads without wrapping it again.
    message: (ws, message, isBinary) => {
      try {
        ws.getUserData().session?.receive(Buffer.from(message), isBinary);
      } catch (err) {
        log.error({ err, where: 'message' }, 'gateway callback failed');
      }
    },
    drain: (ws) => guard('drain', () => ws.getUserData().session?.drain()),
    close: (ws, code) =>
      guard('close', () => {
        const data = ws.getUserData();
        data.transport?.markClosed();
        data.session?.closed(code);
      }),
  };
}

interface HttpRoute {
  readonly method: 'get' | 'any';
  readonly path: string;
  readonly handle: (res: HttpResponse, req: HttpRequest) => void;
}

/** The plain HTTP routes: health, the browser client's files, the demo page, and 404 for the rest. */
function httpRoutes(
  streams: GatewayStreams,
  native: boolean,
  files: ReadonlyMap<string, StaticFile>,
): HttpRoute[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      handle: (res) => {
        const closing = streams.closing;
        const body = JSON.stringify({
          status: closing ? 'closing' : 'ok',
          native,
          streams: streams.sessions.size,
        });
        res.writeStatus(closing ? '503 Service Unavailable' : '200 OK');
        res.writeHeader('content-type', 'application/json').end(body);
      },
    },
    {
      method: 'get',
      path: `${STATIC_PREFIX}:file`,
      handle: (res, req) => {
        const file = files.get(req.getParameter(0) ?? '');
        if (!file) {
          res.writeStatus('404 Not Found').end('not found');
          return;
        }
        res
          .writeHeader('content-type', file.contentType)
          .writeHeader('cache-control', 'no-cache')
          .end(file.body);
      },
    },
    {
      method: 'get',
      path: '/',
      handle: (res) => {
        res.writeStatus('302 Found').writeHeader('location', `${STATIC_PREFIX}index.html`).end();
      },
    },
    { method: 'any', path: '/*', handle: (res) => void res.writeStatus('404 Not Found').end('not found') },
  ];
}

function listen(app: TemplatedApp, options: GatewayOptions): Promise<us_listen_socket> {
  return new Promise<us_listen_socket>((resolve, reject) => {
    // The host + options form exists on the native app and the fallback but is missing from the typings.
    const listenOn = app.listen as unknown as (
      host: string,
      port: number,
      listenOptions: number,
      cb: (socket: us_listen_socket | false) => void,
    ) => TemplatedApp;
    const listenOptions = options.reusePort ? LISTEN_DEFAULT : LISTEN_EXCLUSIVE_PORT;
    listenOn.call(app, options.host, options.port, listenOptions, (socket) => {
      if (socket) resolve(socket);
      else
        reject(
          new ListenError(
            `media gateway could not listen on ${options.host}:${options.port}: the port is in use (another server?) or the address is not this machine's`,
          ),
        );
    });
  });
}

function safeDecode(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
