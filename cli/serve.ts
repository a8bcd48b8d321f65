import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { buildApiApp } from '../control-api/app.ts';
import { TWILIO_STATUS_CALLBACK_PATH } from '../control-api/routes/carriers/twilio.ts';
import { StreamTokens } from '../core/auth/stream-tokens.ts';
import { DiskCallArtifacts } from '../core/calls/artifacts.ts';
import { callEndedLine } from '../core/calls/call-log.ts';
import { Dialer, settleRingOutcomes } from '../core/calls/dialer.ts';
import { CallLifecycle } from '../core/calls/lifecycle.ts';
import { publishLiveEvent } from '../core/calls/live-events.ts';
import { LIVE_CALLS_PER_WORKSPACE, LiveCallSlots } from '../core/calls/live-slots.ts';
import { CallRecovery } from '../core/calls/recovery.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, Role } from '../core/config.ts';
import { createCoordinator } from '../core/coord/index.ts';
import type { Coordinator } from '../core/coord/types.ts';
import { announceThrough } from '../core/events/announce.ts';
import { WebhookDispatcher } from '../core/events/dispatcher.ts';
import { ensureServerPortsFree, listenErrorOf } from '../core/listen-error.ts';
import { createLogger } from '../core/logger.ts';
import { SecretCipher } from '../core/secrets/cipher.ts';
import { SecretService } from '../core/secrets/service.ts';
import type { Store } from '../core/store/types.ts';
import { PostCallTools } from '../core/tools/post-call.ts';
import { PreCallTools } from '../core/tools/pre-call.ts';
import { ToolRunner } from '../core/tools/runner.ts';
import type { SpeechCoverage } from '../engines/stt/coverage.ts';
import { VoiceCatalogue } from '../engines/tts/catalogue.ts';
import { CallStreams } from '../gateway/calls/handler.ts';
import { SandboxCarrier } from '../gateway/carriers/sandbox/originate.ts';
import { TwilioCarrier } from '../gateway/carriers/twilio/originate.ts';
import { startGateway } from '../gateway/server.ts';
import { WebCallCarrier } from '../gateway/web/originate.ts';
import { PipelineMetrics } from '../pipeline/metrics.ts';
import { bootstrapFirstWorkspace } from './bootstrap.ts';
import { type DrainableCalls, drainLiveCalls } from './drain.ts';
import { buildCallEngines } from './engines.ts';
import { resolveSecretKey } from './secret-key.ts';
import { openConfiguredStore } from './store.ts';

/** How often a worker looks for calls whose node stopped, or that ring past the deadline. */
const RECOVERY_SWEEP_MS = 5_000;

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
  await ensureServerPortsFree(config);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const store = await openConfiguredStore(config, options.clock);
  const coord = createCoordinator({
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
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const artifacts = new DiskCallArtifacts(path.join(config.dataDir, 'recordings'));
  const secretKey = resolveSecretKey(config);
  const closers: Array<() => Promise<void>> = [];
  /** What stops this node taking new calls, first thing on shutdown. */
  const stopTaking: Array<() => Promise<void>> = [];
  /** By log field: `live_calls` on a gateway, `sandbox_calls` (simulated callees) on a worker. */
  const liveCalls: Record<string, DrainableCalls> = {};
  let apiUrl: string | undefined;
  let gatewayUrl: string | undefined;
  let bootstrapped: RunningPlatform['bootstrapped'];
  let speech: SpeechCoverage | undefined;
  let toolRunner: ToolRunner | undefined;
  /** One tool runner per process, for whichever roles run tools (the dialer's pre_call, the gateway's on_call). */
  const tools = () => {
    if (toolRunner) return toolRunner;
    const runner = new ToolRunner({
      secrets: new SecretService(store, new SecretCipher(secretKey)),
      allowPrivate: config.allowPrivateWebhooks,
      ...(options.webhookCa ? { extraCa: options.webhookCa } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    closers.push(() => runner.close());
    toolRunner = runner;
    return runner;
  };

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
    const runsCalls = config.roles.includes('gateway') || config.roles.includes('worker');
    const slots = new LiveCallSlots(coord, LIVE_CALLS_PER_WORKSPACE, config.liveCallLeaseMs);
    const postCall = new PostCallTools({
      store,
      secrets: new SecretService(store, new SecretCipher(secretKey)),
      readTranscript: (workspaceId, callId) => artifacts.readTranscript(workspaceId, callId),
    });
    const lifecycle = new CallLifecycle({
      store,
      slots,
      afterSettle: postCall,
      announce: announceThrough(coord),
      onSettled: (call) => logger.info(callEndedLine(call), 'call ended'),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const tokens = new StreamTokens({
      secret: secretKey,
      // One-time tokens across every gateway node: the first claim takes a coordinator lock that is never
      // released; it expires with the token.
      claims: { claim: async (id, ttlMs) => (await coord.lock(`stream-token:${id}`, ttlMs)) !== null },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const engines = runsCalls ? await buildCallEngines(config.engines, logger) : undefined;
    if (engines) closers.push(() => engines.close());
    speech = engines?.coverage;
    if (config.roles.includes('gateway') && engines) {
      const streams = new CallStreams({
        store,
        lifecycle,
        slots,
        artifacts,
        engines: engines.engines,
        engineNames: engines.names,
        metrics: new PipelineMetrics(metrics),
        partialDir: path.join(config.dataDir, 'recordings', '.partial'),
        nodeId: config.nodeId,
        liveEvents: (callId, event) => {
          publishLiveEvent(coord, callId, event).catch(() => {});
        },
      });
      await streams.listen(coord);
      closers.push(() => streams.close());
      liveCalls.live_calls = streams;
      const gateway = await startGateway({
        host: config.host,
        port: config.gatewayPort,
        allowFallback: config.gatewayAllowFallback,
        reusePort: config.gatewayReusePort,
        tokens,
        handlerFactory: streams.handlerFactory,
        endedCallEvent: streams.endedCallEvent,
        registry: metrics,
        logger,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      gatewayUrl = `ws://${loopbackHost(config.host)}:${gateway.port}`;
      closers.push(() => gateway.close());
      stopTaking.push(async () => gateway.stopAccepting());
      logger.info({ url: gatewayUrl }, 'media gateway listening');
    }
    if (config.roles.includes('api')) {
      const voices = VoiceCatalogue.load();
      const { app } = await buildApiApp({
        config,
        store,
        coord,
        voices,
        metrics,
        logger,
        artifacts,
        secretKey,
        streamTokens: tokens,
        gatewayUrl: () => config.publicGatewayUrl ?? gatewayUrl,
        lifecycle,
        ...(engines ? { speech: engines.coverage } : {}),
        ...(config.twilio ? { twilioAuthToken: config.twilio.authToken } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
      closers.push(() => app.close());
      await app.listen({ host: config.host, port: config.port }).catch((error: unknown) => {
        throw listenErrorOf('control API', config.host, config.port, error);
      });
      const address = app.server.address() as AddressInfo;
      apiUrl = `http://${loopbackHost(config.host)}:${address.port}`;
      logger.info({ url: apiUrl }, 'control API listening');
    }
    if (config.roles.includes('worker') && engines) {
      const dispatcher = new WebhookDispatcher({
        store,
        coord,
        retryScheduleMs: config.webhookRetryScheduleMs,
        timeoutMs: config.webhookTimeoutMs,
        allowPrivate: config.allowPrivateWebhooks,
        toolTargets: postCall,
        ...(options.webhookCa ? { extraCa: options.webhookCa } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        onDeadLetter: (dead) =>
          logger.warn(
            {
              event_id: dead.eventId,
              type: dead.type,
              call_id: dead.callId,
              attempts: dead.attempts,
              last_status: dead.status,
              last_error: dead.error,
            },
            'webhook event dead-lettered',
          ),
      });
      await dispatcher.start();
      closers.push(() => dispatcher.stop());
      const mediaUrl = config.publicGatewayUrl ?? gatewayUrl;
      const sandbox = mediaUrl
        ? new SandboxCarrier({
            gatewayUrl: mediaUrl.replace(/^http/, 'ws'),
            tokens,
            reportRingOutcome: settleRingOutcomes(lifecycle),
            ringMs: config.sandboxRingMs,
            voices: engines.voices,
            logger: logger.child({ carrier: 'sandbox' }),
          })
        : undefined;
      if (!sandbox) logger.warn('no gateway to dial into: set PUBLIC_GATEWAY_URL; calls will fail');
      // The simulated callees live here: a draining worker lets their calls end by their own rules too; the
      // carrier's close hangs up the rest, and their gateways settle them.
      if (sandbox)
        liveCalls.sandbox_calls = {
          get live() {
            return sandbox.activeCalls;
          },
          idle: () => sandbox.idle(),
          endAll: async () => 0,
        };
      const web = new WebCallCarrier();
      const twilio =
        config.twilio && mediaUrl && config.publicApiUrl
          ? new TwilioCarrier({
              apiBase: config.twilio.apiBase,
              accountSid: config.twilio.accountSid,
              authToken: config.twilio.authToken,
              fromNumber: config.twilio.fromNumber,
              mediaUrl: mediaUrl.replace(/^http/, 'ws'),
              statusCallbackUrl: `${config.publicApiUrl.replace(/\/+$/, '')}${TWILIO_STATUS_CALLBACK_PATH}`,
              tokens,
            })
          : undefined;
      if (config.twilio && !twilio)
        logger.warn('Twilio needs PUBLIC_API_URL and PUBLIC_GATEWAY_URL; not dialing');
      const carriers = [sandbox, web, twilio].filter((c) => c !== undefined);
      closers.push(async () => {
        await Promise.allSettled(carriers.map((carrier) => carrier.close()));
      });
      const preCall = new PreCallTools({
        store,
        runner: tools(),
        logger: logger.child({ phase: 'pre_call' }),
      });
      const dialer = new Dialer({
        store,
        beforeDial: (call) => preCall.prepare(call),
        coord,
        lifecycle,
        slots,
        carriers,
        carrierFor: async (call) => {
          if (call.channel === 'web') return web;
          const workspace = await store.workspaces.get(call.workspaceId);
          // Production dialing needs a carrier account; without one such calls end `failed`.
          return workspace?.mode === 'sandbox' ? sandbox : twilio;
        },
        whyNoCarrier: () =>
          !mediaUrl
            ? 'no media gateway to dial into: set PUBLIC_GATEWAY_URL'
            : config.twilio
              ? 'Twilio is configured but needs PUBLIC_API_URL and a wss:// PUBLIC_GATEWAY_URL'
              : 'production calls need a carrier account: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER, PUBLIC_API_URL and PUBLIC_GATEWAY_URL',
        reportError: (err) => logger.error({ err }, 'dialer failed'),
        ...(options.clock ? { clock: options.clock } : {}),
      });
      await dialer.start();
      closers.push(() => dialer.stop());
      stopTaking.push(() => dialer.stop());
      const recovery = new CallRecovery({
        store,
        coord,
        lifecycle,
        slots,
        webJoinWindowMs: config.webCallJoinMs,
        ...(options.clock ? { clock: options.clock } : {}),
      });
      const sweep = () =>
        recovery.sweep().then(
          (ended) => {
            const calls = ended.map((c) => ({ id: c.id, status: c.status, ended_reason: c.endedReason }));
            if (calls.length > 0)
              logger.warn({ calls }, 'recovery ended calls: unanswered, or their node stopped');
          },
          (err: unknown) => logger.error({ err }, 'call recovery failed'),
        );
      await sweep();
      // Often enough to renew the slots of web calls waiting for their browser within a short lease.
      const sweeper = setInterval(sweep, Math.min(RECOVERY_SWEEP_MS, slots.renewEveryMs));
      closers.push(async () => clearInterval(sweeper));
      logger.info('worker role: dialer, call recovery and webhook dispatcher running');
    }
  } catch (error) {
    // What did start stops again, so a node that cannot take its ports exits instead of half-running.
    for (const close of closers.reverse()) await close().catch(() => {});
    await Promise.allSettled([store.close(), coord.close()]);
    throw error;
  }

  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      for (const closer of [...closers].reverse()) await closer();
      await coord.close();
      await store.close();
    })());

  return {
    roles: config.roles,
    apiUrl,
    gatewayUrl,
    speech,
    store,
    coord,
    bootstrapped,
    async shutdown({ drainMs, endNow }) {
      for (const stop of stopTaking)
        await stop().catch((err: unknown) => logger.error({ err }, 'stop failed'));
      await drainLiveCalls(liveCalls, { windowMs: drainMs, logger, ...(endNow ? { endNow } : {}) });
      await close();
    },
    close,
  };
}

/** The address to reach a server bound to `host` from this machine. */
function loopbackHost(host: string): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return reachable.includes(':') ? `[${reachable}]` : reachable;
}
