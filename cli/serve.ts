import path from 'node:path';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RecordingLinks } from '../control-api/http/signed-url.ts';
import { StreamTokens } from '../core/auth/stream-tokens.ts';
import { DiskCallArtifacts } from '../core/calls/artifacts.ts';
import { callEndedLine } from '../core/calls/call-log.ts';
import { CallLifecycle } from '../core/calls/lifecycle.ts';
import { LIVE_CALLS_PER_WORKSPACE, LiveCallSlots } from '../core/calls/live-slots.ts';
import { type Clock, systemClock } from '../core/clock.ts';
import type { Config, Role } from '../core/config.ts';
import { createCoordinator } from '../core/coord/index.ts';
import type { Coordinator } from '../core/coord/types.ts';
import { whenCoordinatorAnswers } from '../core/coord/unavailable.ts';
import { announceThrough } from '../core/events/announce.ts';
import { ensureServerPortsFree } from '../core/listen-error.ts';
import { createLogger } from '../core/logger.ts';
import { SecretCipher } from '../core/secrets/cipher.ts';
import { SecretService } from '../core/secrets/service.ts';
import type { Store } from '../core/store/types.ts';
import { judgeNumberAfterCall } from '../core/telephony/health.ts';
import { PostCallTools } from '../core/tools/post-call.ts';
import { withRetries } from '../core/v1/retries.ts';
import { V1CallEvents } from '../core/v1/webhooks.ts';
import type { SpeechCoverage } from '../engines/stt/coverage.ts';
import { bootstrapFirstWorkspace } from './bootstrap.ts';
import { type DrainableCalls, drainLiveCalls } from './drain.ts';
import { buildCallEngines } from './engines.ts';
import { startApiRole } from './roles/api.ts';
import { startGatewayRole } from './roles/gateway.ts';
import { type SharedParts, Teardown } from './roles/parts.ts';
import { startWorkerRole } from './roles/worker.ts';
import { resolveSecretKey } from './secret-key.ts';
import { StartupWait } from './startup-wait.ts';
import { openConfiguredStore } from './store.ts';

/** How long a media stream that arrives while Redis is away waits to claim its one-time token. */
const STREAM_CLAIM_WAIT_MS = 5_000;

export interface RunningPlatform {
  roles: readonly Role[];
  /** Base URL of the control API, when the api role runs. */
  apiUrl: string | undefined;
  /** Base URL (ws://) of the media gateway, when the gateway role runs. */
  gatewayUrl: string | undefined;
  store: Store;
  coord: Coordinator;
  /** Which languages this node's calls hear with words, and which by voice activity only (nodes running calls). */
  speech: SpeechCoverage | undefined;
  /** Credentials of the workspace created on first start, if this start created one. */
  bootstrapped: { apiKey: string; workspaceId: string; file: string } | undefined;
  /**
   * Graceful stop (SIGTERM/SIGINT): stops taking new calls on this node, lets live calls run until they end or
   * `drainMs` passes (or `endNow` resolves: a second signal), ends the rest `failed` with `node-shutdown`, then
   * closes everything.
   */
  shutdown(options: { drainMs: number; endNow?: Promise<void> }): Promise<void>;
  close(): Promise<void>;
}

/**
 * The one composition root: builds every part the configured roles need and wires them together.
 * Nothing else in the code base constructs stores, coordinators or servers.
 */
export async function startPlatform(
  config: Config,
  options: {
    logger?: Logger;
    clock?: Clock;
    /** A CA certificate (PEM) webhook receivers may be signed by, besides the system's (tests). */
    webhookCa?: string;
  } = {},
): Promise<RunningPlatform> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  await ensureServerPortsFree(config);
  const wait = new StartupWait({ waitMs: config.startupWaitMs, logger });
  const store = await wait.step('open the store', () => openConfiguredStore(config, clock));
  const coord = openCoordinator(config, logger, clock);
  const teardown = new Teardown();
  try {
    const bootstrapped = await wait.step('bootstrap', () => bootstrap(config, store, coord, logger));
    const parts = await buildSharedParts(config, { logger, clock, store, coord }, teardown);
    // A role that failed halfway for want of Redis or PostgreSQL is stopped again before the next try.
    const rolesTeardown = new Teardown();
    const roles = await wait.step(
      'start the roles',
      () => startRoles(parts, rolesTeardown, options.webhookCa),
      () => rolesTeardown.run({ ignoreErrors: true }),
    );
    teardown.add(() => rolesTeardown.run({ ignoreErrors: false }));
    return runningPlatform(parts, roles, teardown, bootstrapped);
  } catch (error) {
    // What did start stops again, so a node that cannot take its ports exits instead of half-running.
    await teardown.run({ ignoreErrors: true });
    await Promise.allSettled([store.close(), coord.close()]);
    throw error;
  }
}

function openCoordinator(config: Config, logger: Logger, clock: Clock): Coordinator {
  return createCoordinator({
    keyPrefix: config.redisPrefix,
    reportError: (err, context) => logger.error({ err, context }, 'coordinator error'),
    reportConnection: (change) => {
      if (change.state === 'lost')
        logger.error(
          { err: change.error },
          'lost the connection to Redis: live calls go on; dialing, slot renewals and event fan-out wait for it',
        );
      else logger.warn({ down_ms: change.downMs }, 'connection to Redis restored');
    },
    redisUrl: config.redisUrl,
    clock,
  });
}

async function bootstrap(
  config: Config,
  store: Store,
  coord: Coordinator,
  logger: Logger,
): Promise<RunningPlatform['bootstrapped']> {
  const first = await bootstrapFirstWorkspace(config, store, coord);
  if (!first) return undefined;
  const { workspace_id: workspaceId, api_key: apiKey } = first.workspace;
  logger.info({ workspace_id: workspaceId, file: first.file }, 'created the first workspace');
  return { apiKey, workspaceId, file: first.file };
}

async function buildSharedParts(
  config: Config,
  base: Pick<SharedParts, 'logger' | 'clock' | 'store' | 'coord'>,
  teardown: Teardown,
): Promise<PartsBeforeRoles> {
  const { logger, clock, store, coord } = base;
  const slots = new LiveCallSlots(coord, LIVE_CALLS_PER_WORKSPACE, config.liveCallLeaseMs);
  const secretKey = resolveSecretKey(config);
  const artifacts = new DiskCallArtifacts(path.join(config.dataDir, 'recordings'));
  const postCallTools = new PostCallTools({
    store,
    secrets: new SecretService(store, new SecretCipher(secretKey)),
    readTranscript: (workspaceId, callId) => artifacts.readTranscript(workspaceId, callId),
  });
  const lifecycle = new CallLifecycle({
    store,
    slots,
    afterSettle: {
      // A number's health is judged in the settlement's transaction, before its post_call deliveries.
      eventsFor: async (repos, call, object, now) => {
        const change = await judgeNumberAfterCall(repos, call, now);
        if (change) logger.info({ phone_number_id: change.id, health: change.to }, 'phone number rests');
        return postCallTools.eventsFor(repos, call, object, now);
      },
    },
    // v1 webhooks, and the retries of v1 assistants' `retryProtocol`, in the transactions of the calls' changes.
    companionEvents: withRetries(v1CallEvents(config, secretKey, artifacts)),
    announce: announceThrough(coord),
    onSettled: (call) => logger.info(callEndedLine(call), 'call ended'),
    clock,
  });
  const tokens = new StreamTokens({
    secret: secretKey,
    // One-time tokens across every gateway node: the first claim takes a coordinator lock that is never
    // released; it expires with the token. A media stream that arrives while Redis is away waits for it a
    // few seconds (the carrier holds the call meanwhile) before it is refused.
    claims: {
      claim: async (id, ttlMs) =>
        (await whenCoordinatorAnswers(() => coord.lock(`stream-token:${id}`, ttlMs), {
          waitMs: STREAM_CLAIM_WAIT_MS,
        })) !== null,
    },
    clock,
  });
  const runsCalls = config.roles.includes('gateway') || config.roles.includes('worker');
  const engines = runsCalls ? await buildCallEngines(config.engines, logger) : undefined;
  if (engines) teardown.add(() => engines.close());
  let localGatewayUrl: string | undefined;
  return {
    ...base,
    config,
    artifacts,
    secretKey,
    postCallTools,
    slots,
    lifecycle,
    tokens,
    engines,
    localGatewayUrl: () => localGatewayUrl,
    setLocalGatewayUrl: (url) => {
      localGatewayUrl = url;
    },
  };
}

/** Legacy v1 webhooks of calls placed through v1; their `recordingUrl` is a signed link on the public API URL. */
function v1CallEvents(config: Config, secretKey: string, artifacts: DiskCallArtifacts): V1CallEvents {
  const links = new RecordingLinks(secretKey);
  const base = config.publicApiUrl?.replace(/\/+$/, '');
  return new V1CallEvents({
    recordingUrl: (call, now) => (base ? `${base}${links.pathFor(call.workspaceId, call.id, now)}` : null),
    readTranscript: (workspaceId, callId) => artifacts.readTranscript(workspaceId, callId),
  });
}

/** The shared parts but the metrics registry, which each try at starting the roles makes anew. */
type PartsBeforeRoles = Omit<SharedParts, 'metrics'> & { setLocalGatewayUrl(url: string): void };

interface StartedRoles {
  apiUrl: string | undefined;
  gatewayUrl: string | undefined;
  /** What stops this node taking new calls, first thing on shutdown. */
  stopTaking: Array<() => Promise<void>>;
  /** By log field: `live_calls` on a gateway, `sandbox_calls` (simulated callees) on a worker. */
  liveCalls: Record<string, DrainableCalls>;
}

/**
 * Starts the configured roles in order: gateway (the others point at it), api, worker. The roles register
 * their metrics on a registry of this try's own, so a try that failed halfway leaves none behind.
 */
async function startRoles(
  base: PartsBeforeRoles,
  teardown: Teardown,
  webhookCa: string | undefined,
): Promise<StartedRoles> {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const parts = { ...base, metrics };
  const { roles } = parts.config;
  const started: StartedRoles = { apiUrl: undefined, gatewayUrl: undefined, stopTaking: [], liveCalls: {} };
  if (roles.includes('gateway') && parts.engines) {
    const gateway = await startGatewayRole(parts, parts.engines, teardown, { webhookCa });
    parts.setLocalGatewayUrl(gateway.url);
    started.gatewayUrl = gateway.url;
    started.liveCalls.live_calls = gateway.liveCalls;
    started.stopTaking.push(gateway.stopAccepting);
  }
  if (roles.includes('api')) started.apiUrl = await startApiRole(parts, teardown);
  if (roles.includes('worker') && parts.engines) {
    const worker = await startWorkerRole(parts, parts.engines, teardown, { webhookCa });
    if (worker.sandboxCalls) started.liveCalls.sandbox_calls = worker.sandboxCalls;
    started.stopTaking.push(worker.stopDialing);
  }
  return started;
}

function runningPlatform(
  parts: PartsBeforeRoles,
  roles: StartedRoles,
  teardown: Teardown,
  bootstrapped: RunningPlatform['bootstrapped'],
): RunningPlatform {
  const { config, logger, store, coord } = parts;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      await teardown.run({ ignoreErrors: false });
      await coord.close();
      await store.close();
    })());
  return {
    roles: config.roles,
    apiUrl: roles.apiUrl,
    gatewayUrl: roles.gatewayUrl,
    speech: parts.engines?.coverage,
    store,
    coord,
    bootstrapped,
    async shutdown({ drainMs, endNow }) {
      for (const stop of roles.stopTaking)
        await stop().catch((err: unknown) => logger.error({ err }, 'stop failed'));
      await drainLiveCalls(roles.liveCalls, { windowMs: drainMs, logger, endNow });
      await close();
    },
    close,
  };
}
