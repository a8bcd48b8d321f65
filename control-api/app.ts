import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { AgentService } from '../core/agents/service.ts';
import type { Config } from '../core/config.ts';
import type { Coordinator } from '../core/coord/types.ts';
import type { Store } from '../core/store/types.ts';
import type { VoiceCatalogue } from '../engines/tts/catalogue.ts';
import { RouteRegistry } from './http/route.ts';
import { registerBearerAuth } from './plugins/auth.ts';
import { frameworkErrorHandler, registerErrorHandling } from './plugins/errors.ts';
import { registerHttpMetrics } from './plugins/metrics.ts';
import { registerRateLimit } from './plugins/rate-limit.ts';
import { registerNotLiveRoutes } from './routes/not-live.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { registerAgentRoutes } from './routes/v2/agents.ts';
import { registerAgentRevisionRoutes } from './routes/v2/revisions.ts';
import { registerVoiceRoutes } from './routes/v2/voices.ts';
import { registerWalletRoutes } from './routes/v2/wallet.ts';

export interface ApiDeps {
  config: Pick<Config, 'bodyLimitBytes' | 'apiRatePerSec' | 'apiRateBurst' | 'publicApiUrl'>;
  store: Store;
  coord: Coordinator;
  voices: VoiceCatalogue;
  metrics: Registry;
  logger: Logger;
}

/** The control API: every v2 route, the OpenAPI document, health and metrics. */
export async function buildApiApp(deps: ApiDeps): Promise<{ app: FastifyInstance; routes: RouteRegistry }> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Per-request lines cost throughput; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.config.bodyLimitBytes,
    // Node's own header and connection limits stay at their defaults; requests answer well within them.
    requestTimeout: 30_000,
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  registerErrorHandling(app, { bodyLimitBytes: deps.config.bodyLimitBytes });
  registerHttpMetrics(app, deps.metrics);
  registerBearerAuth(app, deps.store.apiKeys);
  registerRateLimit(app, deps.coord, {
    ratePerSec: deps.config.apiRatePerSec,
    burst: deps.config.apiRateBurst,
  });

  const routes = new RouteRegistry();
  const agents = new AgentService(deps.store, deps.voices);
  registerAgentRoutes(app, routes, agents);
  registerAgentRevisionRoutes(app, routes, agents);
  registerVoiceRoutes(app, routes, deps.voices);
  registerWalletRoutes(app, routes, deps.store);
  registerNotLiveRoutes(app, routes);
  registerSystemRoutes(app, {
    registry: routes,
    store: deps.store,
    coord: deps.coord,
    metrics: deps.metrics,
    ...(deps.config.publicApiUrl ? { serverUrl: deps.config.publicApiUrl } : {}),
  });
  await app.ready();
  return { app, routes };
}
