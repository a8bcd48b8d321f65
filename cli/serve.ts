import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { buildApiApp } from '../control-api/app.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, Role } from '../core/config.ts';
import { createCoordinator } from '../core/coord/index.ts';
import type { Coordinator } from '../core/coord/types.ts';
import { WebhookDispatcher } from '../core/events/dispatcher.ts';
import { createLogger } from '../core/logger.ts';
import type { Store } from '../core/store/types.ts';
import { VoiceCatalogue } from '../engines/tts/catalogue.ts';
import { noCallHandler } from '../gateway/handlers/no-call.ts';
import { startGateway } from '../gateway/server.ts';
import { StreamTokens } from '../gateway/tokens.ts';
import { bootstrapFirstWorkspace } from './bootstrap.ts';
import { resolveSecretKey } from './secret-key.ts';
import { openConfiguredStore } from './store.ts';

export interface RunningPlatform {
  roles: readonly Role[];
  /** Base URL of the control API, when the api role runs. */
  apiUrl: string | undefined;
  /** Base URL (ws://) of the media gateway, when the gateway role runs. */
  gatewayUrl: string | undefined;
  store: Store;
  coord: Coordinator;
  /** Credentials of the workspace created on first start, if this start created one. */
  bootstrapped: { apiKey: string; workspaceId: string; file: string } | undefined;
  close(): Promise<void>;
}

/**
 * The one composition root: builds every part the configured roles need and wires them together.
 * Nothing else in the code base constructs stores, coordinators or servers.
 */
export async function startPlatform(
  config: Config,
  options: { logger?: Logger; clock?: Clock } = {},
): Promise<RunningPlatform> {
  const logger = options.logger ?? createLogger(config);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const store = await openConfiguredStore(config, options.clock);
  const coord = createCoordinator({
    keyPrefix: config.redisPrefix,
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const closers: Array<() => Promise<void>> = [];
  let apiUrl: string | undefined;
  let gatewayUrl: string | undefined;
  let bootstrapped: RunningPlatform['bootstrapped'];

  try {
    const first = await bootstrapFirstWorkspace(config, store, coord);
    if (first) {
      bootstrapped = {
        apiKey: first.workspace.api_key,
        workspaceId: first.workspace.workspace_id,
        file: first.file,
      };
      logger.info(
        { workspace_id: first.workspace.workspace_id, file: first.file },
        'created the first workspace',
      );
    }
    if (config.roles.includes('api')) {
      const voices = VoiceCatalogue.load();
      const { app } = await buildApiApp({ config, store, coord, voices, metrics, logger });
      await app.listen({ host: config.host, port: config.port });
      const address = app.server.address() as AddressInfo;
      apiUrl = `http://${loopbackHost(config.host)}:${address.port}`;
      closers.push(() => app.close());
      logger.info({ url: apiUrl }, 'control API listening');
    }
    if (config.roles.includes('gateway')) {
      const tokens = new StreamTokens({
        secret: resolveSecretKey(config),
        // One-time tokens across every gateway node: the first claim takes a coordinator lock that is never
        // released; it expires with the token.
        claims: { claim: async (id, ttlMs) => (await coord.lock(`stream-token:${id}`, ttlMs)) !== null },
        ...(options.clock ? { clock: options.clock } : {}),
      });
      const gateway = await startGateway({
        host: config.host,
        port: config.gatewayPort,
        allowFallback: config.gatewayAllowFallback,
        tokens,
        handlerFactory: noCallHandler,
        registry: metrics,
        logger,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      gatewayUrl = `ws://${loopbackHost(config.host)}:${gateway.port}`;
      closers.push(() => gateway.close());
      logger.info({ url: gatewayUrl }, 'media gateway listening');
    }
    if (config.roles.includes('worker')) {
      const dispatcher = new WebhookDispatcher({
        store,
        coord,
        retryScheduleMs: config.webhookRetryScheduleMs,
        timeoutMs: config.webhookTimeoutMs,
        allowPrivate: config.allowPrivateWebhooks,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      await dispatcher.start();
      closers.push(() => dispatcher.stop());
      logger.info('worker role: webhook dispatcher running');
    }
  } catch (error) {
    await Promise.allSettled([store.close(), coord.close()]);
    throw error;
  }

  return {
    roles: config.roles,
    apiUrl,
    gatewayUrl,
    store,
    coord,
    bootstrapped,
    async close() {
      for (const close of closers.reverse()) await close();
      await coord.close();
      await store.close();
    },
  };
}

/** The address to reach a server bound to `host` from this machine. */
function loopbackHost(host: string): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return reachable.includes(':') ? `[${reachable}]` : reachable;
}
