import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { StreamTokens } from '../core/auth/stream-tokens.ts';
import type { CallArtifacts } from '../core/calls/artifacts.ts';
import { fleetRoom, GatewayFleet } from '../core/calls/fleet.ts';
import { IncomingCalls } from '../core/calls/incoming.ts';
import type { CallLifecycle } from '../core/calls/lifecycle.ts';
import type { LiveCallSlots } from '../core/calls/live-slots.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Coordinator } from '../core/coord/types.ts';
import type { FlowModelSet } from '../core/flows/jobs/models.ts';
import { SecretCipher } from '../core/secrets/cipher.ts';
import type { Store } from '../core/store/types.ts';
import { TwilioAccounts } from '../core/telephony/twilio-account.ts';
import type { SpeechCoverage } from '../engines/stt/coverage.ts';
import type { SpeechToText } from '../engines/stt/types.ts';
import type { VoiceCatalogue } from '../engines/tts/catalogue.ts';
import type { VoiceRouter } from '../engines/tts/router.ts';
import type { VoiceActivityDetector } from '../engines/vad/types.ts';
import {
  answerClientError,
  answerUnsupportedExpectation,
  httpServerOptions,
} from './http/connection-limits.ts';
import { registerJsonBodies } from './http/json-body.ts';
import { RouteRegistry } from './http/route.ts';
import { registerAnswerDeadline } from './plugins/answer-deadline.ts';
import {
  type ErrorShape,
  envelopeShape,
  frameworkErrorHandlerOf,
  registerErrorHandling,
} from './plugins/errors.ts';
import { registerHttpMetrics } from './plugins/metrics.ts';
import { registerTwilioCallbackRoutes } from './routes/carriers/twilio.ts';
import { registerTwilioVoiceRoutes } from './routes/carriers/twilio-voice.ts';
import { registerLiveSttRedirect } from './routes/live-stt-redirect.ts';
import { registerRecordingRoutes } from './routes/recordings.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { ProductOfRequest, v1ErrorAnswer } from './routes/v1/http.ts';
import { registerV1 } from './routes/v1/plugin.ts';
import { registerV2 } from './routes/v2/plugin.ts';

export interface ApiDeps {
  config: Pick<
    Config,
    | 'bodyLimitBytes'
    | 'apiHttp'
    | 'apiRatePerSec'
    | 'apiRateBurst'
    | 'publicApiUrl'
    | 'allowPrivateWebhooks'
    | 'dataDir'
    | 'webCallJoinMs'
    | 'twilioApiBase'
    | 'v1Host'
  >;
  store: Store;
  /** Transcripts and recordings of ended calls. */
  artifacts: CallArtifacts;
  /** The deployment secret: signs recording URLs. */
  secretKey: string;
  /** Mints the one-time tokens browsers join web calls with. */
  streamTokens: StreamTokens;
  /** The media gateway's public base URL (ws:// or wss://), when the deployment has one. */
  gatewayUrl: () => string | undefined;
  /** Ends calls (abort, carrier callbacks), releasing their live-call slots. */
  lifecycle: CallLifecycle;
  /** The workspaces' live-call slots: incoming calls take theirs on arrival. */
  slots: LiveCallSlots;
  /** The Twilio account's auth token, to verify its status callbacks; unset when Twilio is not configured. */
  twilioAuthToken?: string;
  /** Which languages this node's calls hear with words (`GET /healthz`); unset on a node that runs no calls. */
  speech?: SpeechCoverage;
  clock?: Clock;
  coord: Coordinator;
  voices: VoiceCatalogue;
  /** Speaks `POST /v2/speech`; unset, that route answers 501. */
  speaker?: VoiceRouter;
  /** Transcribes `POST /v2/transcriptions/sync` on a node with speech engines; unset, that route answers 501. */
  transcriber?: { stt: SpeechToText | undefined; vad: VoiceActivityDetector };
  metrics: Registry;
  logger: Logger;
  /** The models flow drafts and tests run on; none configured when absent. */
  flowModels?: FlowModelSet;
  /** How long `POST /v2/agents/flow/generate` waits for its draft before answering 202 (default 20 s). */
  flowDraftWaitMs?: number;
}

/** The control API: the v2 and legacy v1 products (one plugin each), carrier callbacks, recordings, the OpenAPI document, health and metrics. */
export async function buildApiApp(
  deps: ApiDeps,
): Promise<{ app: FastifyInstance; routes: RouteRegistry; v1: ProductOfRequest }> {
  const limits = deps.config.apiHttp;
  const product = new ProductOfRequest(deps.config.v1Host);
  // Answers given outside the products' routes take the shape of the product the request is for.
  const shape: ErrorShape = (raw, error) =>
    raw && product.isV1(raw) ? v1ErrorAnswer(error) : envelopeShape(raw, error);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Per-request lines cost throughput; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimitBytes,
    http: httpServerOptions(limits),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    clientErrorHandler: (error, socket) => answerClientError(error, socket, limits),
    // Requests that arrive while the server closes are answered by the error handling, in the envelope.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandlerOf(shape),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  app.server.on('checkExpectation', (request, response) =>
    answerUnsupportedExpectation(request, response, shape),
  );
  registerErrorHandling(app, { bodyLimitBytes: deps.config.bodyLimitBytes, shape });
  registerAnswerDeadline(app, limits.answerTimeoutMs, shape);
  registerJsonBodies(app);
  registerHttpMetrics(app, deps.metrics);

  const routes = new RouteRegistry();
  const incoming = {
    accounts: new TwilioAccounts(deps.config.twilioApiBase, new SecretCipher(deps.secretKey)),
    calls: new IncomingCalls({
      store: deps.store,
      slots: deps.slots,
      fleetRoom: () => fleetRoom(new GatewayFleet(deps.coord), deps.store),
      ...(deps.clock ? { clock: deps.clock } : {}),
    }),
  };
  const v1 = registerV1(app, deps, product);
  registerV2(app, routes, deps, incoming);
  registerTwilioVoiceRoutes(app, routes, {
    store: deps.store,
    accounts: incoming.accounts,
    incoming: incoming.calls,
    lifecycle: deps.lifecycle,
    tokens: deps.streamTokens,
    gatewayUrl: deps.gatewayUrl,
    publicApiUrl: deps.config.publicApiUrl,
    logger: deps.logger,
  });
  if (deps.twilioAuthToken) {
    registerTwilioCallbackRoutes(app, routes, {
      store: deps.store,
      lifecycle: deps.lifecycle,
      authToken: deps.twilioAuthToken,
      publicApiUrl: deps.config.publicApiUrl,
    });
  }
  registerRecordingRoutes(app, routes, deps);
  registerLiveSttRedirect(app, routes, deps.gatewayUrl);
  registerSystemRoutes(app, {
    registry: routes,
    store: deps.store,
    coord: deps.coord,
    metrics: deps.metrics,
    speech: deps.speech,
    serverUrl: deps.config.publicApiUrl,
  });
  await app.ready();
  return { app, routes, v1 };
}
