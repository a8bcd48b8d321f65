import path from 'node:path';
import { carrierChooser, carriersOf } from '../../core/calls/carrier-choice.ts';
import { CALLS_QUEUED_CHANNEL } from '../../core/calls/control.ts';
import { Dialer } from '../../core/calls/dialer.ts';
import { fleetRoom, GatewayFleet } from '../../core/calls/fleet.ts';
import { onSimulatedIncoming } from '../../core/calls/incoming.ts';
import { CallRecovery } from '../../core/calls/recovery.ts';
import { CampaignDialler } from '../../core/campaigns/dialler.ts';
import { CampaignService } from '../../core/campaigns/service.ts';
import { CoordinatorUnavailableError } from '../../core/coord/unavailable.ts';
import { announceThrough } from '../../core/events/announce.ts';
import { WebhookDispatcher } from '../../core/events/dispatcher.ts';
import { FlowJobWorker } from '../../core/flows/jobs/worker.ts';
import { SecretCipher } from '../../core/secrets/cipher.ts';
import { TranscriptionAudio } from '../../core/speech/transcription-audio.ts';
import { TranscriptionWorker } from '../../core/speech/transcription-jobs.ts';
import { Pacer } from '../../core/telephony/pacing.ts';
import { NumberRenewals } from '../../core/telephony/renewals.ts';
import { SandboxTelephony } from '../../core/telephony/sandbox.ts';
import { PreCallTools } from '../../core/tools/pre-call.ts';
import { v1DialRule } from '../../core/v1/call-settings.ts';
import { V1Keys } from '../../core/v1/keys.ts';
import {
  decodeTranscriptionRecording,
  recordingTranscriber,
} from '../../engines/stt/recording-transcriber.ts';
import type { SandboxCarrier } from '../../gateway/carriers/sandbox/originate.ts';
import { simulateCall } from '../../pipeline/flow-tests/simulate.ts';
import type { DrainableCalls } from '../drain.ts';
import type { CallEngines } from '../engines.ts';
import { buildFlowModels } from '../flow-models.ts';
import { buildCarriers, whyNoCarrier } from './carriers.ts';
import type { SharedParts, Teardown } from './parts.ts';
import { buildToolRunner } from './tools.ts';

/** How often a worker looks for calls whose node stopped, or that ring past the deadline. */
const RECOVERY_SWEEP_MS = 5_000;

export interface StartedWorker {
  /** The sandbox carrier's simulated callees, when this worker runs them. */
  readonly sandboxCalls: DrainableCalls | undefined;
  /** Stops dialing queued calls. */
  stopDialing(): Promise<void>;
}

/** The worker role: webhook dispatcher, dialer (with its carriers) and call recovery. */
export async function startWorkerRole(
  parts: SharedParts,
  engines: CallEngines,
  teardown: Teardown,
  options: { webhookCa: string | undefined },
): Promise<StartedWorker> {
  await startDispatcher(parts, teardown, options.webhookCa);
  const carriers = buildCarriers(parts, engines);
  teardown.add(async () => {
    await Promise.allSettled(carriersOf(carriers).map((carrier) => carrier.close()));
  });
  const preCall = new PreCallTools({
    store: parts.store,
    runner: buildToolRunner(parts, teardown, options.webhookCa),
    logger: parts.logger.child({ phase: 'pre_call' }),
  });
  const fleet = new GatewayFleet(parts.coord);
  const dialer = new Dialer({
    store: parts.store,
    beforeDial: (call) => preCall.prepare(call),
    // Legacy v1 assistants' calling hours and concurrency hold their calls in the queue.
    mayDial: v1DialRule(parts.store, parts.clock),
    coord: parts.coord,
    lifecycle: parts.lifecycle,
    slots: parts.slots,
    carriers: carriersOf(carriers),
    carrierFor: carrierChooser(parts.store, carriers),
    whyNoCarrier: () => whyNoCarrier(parts),
    fleetRoom: () => fleetRoom(fleet, parts.store),
    reportError: unlessRedisAway((err) => parts.logger.error({ err }, 'dialer failed')),
    clock: parts.clock,
  });
  await dialer.start();
  teardown.add(() => dialer.stop());
  const campaigns = await startCampaignDialler(parts, teardown);
  await startRecoverySweeps(parts, teardown);
  if (carriers.sandbox) await startSimulatedCallers(parts, carriers.sandbox, teardown);
  startNumberRenewals(parts, teardown);
  startFlowJobs(parts, teardown);
  await startTranscriptionJobs(parts, engines, teardown, options.webhookCa);
  parts.logger.info('worker role: dialer, call recovery, webhook dispatcher and flow tests running');
  const { sandbox } = carriers;
  return {
    // The simulated callees live here: a draining worker lets their calls end by their own rules too; the
    // carrier's close hangs up the rest, and their gateways settle them.
    sandboxCalls: sandbox && {
      get live() {
        return sandbox.activeCalls;
      },
      idle: () => sandbox.idle(),
      endAll: async () => 0,
    },
    stopDialing: async () => {
      await campaigns.stop();
      await dialer.stop();
    },
  };
}

async function startDispatcher(parts: SharedParts, teardown: Teardown, webhookCa: string | undefined) {
  const { config, logger } = parts;
  const dispatcher = new WebhookDispatcher({
    store: parts.store,
    coord: parts.coord,
    retryScheduleMs: config.webhookRetryScheduleMs,
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.allowPrivateWebhooks,
    toolTargets: parts.postCallTools,
    v1Keys: new V1Keys(parts.store, new SecretCipher(parts.secretKey)),
    extraCa: webhookCa,
    clock: parts.clock,
    reportError: unlessRedisAway((err) => logger.error({ err }, 'webhook dispatcher failed')),
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
  teardown.add(() => dispatcher.stop());
}

/**
 * A pass that failed for want of Redis is part of the coordinator's outage, which its connection logs once when
 * it begins and once when it ends; the parts that retry every second or so meanwhile say nothing more.
 */
function unlessRedisAway(log: (err: unknown) => void): (err: unknown) => void {
  return (err) => {
    // Not every network error: PostgreSQL's are not the coordinator's, and nothing else reports those.
    if (!(err instanceof CoordinatorUnavailableError)) log(err);
  };
}

/** Ends calls whose node stopped or that ring past the deadline: once now, then on an interval. */
async function startRecoverySweeps(parts: SharedParts, teardown: Teardown): Promise<void> {
  const { logger, slots } = parts;
  const recovery = new CallRecovery({
    store: parts.store,
    coord: parts.coord,
    lifecycle: parts.lifecycle,
    slots,
    webJoinWindowMs: parts.config.webCallJoinMs,
    clock: parts.clock,
  });
  const sweep = () =>
    recovery.sweep().then(
      (ended) => {
        const calls = ended.map((c) => ({ id: c.id, status: c.status, ended_reason: c.endedReason }));
        if (calls.length > 0)
          logger.warn({ calls }, 'recovery ended calls: unanswered, or their node stopped');
      },
      unlessRedisAway((err) => logger.error({ err }, 'call recovery failed')),
    );
  await sweep();
  // Often enough to renew the slots of web calls waiting for their browser within a short lease.
  const sweeper = setInterval(sweep, Math.min(RECOVERY_SWEEP_MS, slots.renewEveryMs));
  teardown.add(async () => clearInterval(sweeper));
}

/** Places campaigns' calls: one leader per campaign among the workers. */
async function startCampaignDialler(parts: SharedParts, teardown: Teardown): Promise<CampaignDialler> {
  const { coord, logger, clock } = parts;
  const announce = announceThrough(coord);
  const dialler = new CampaignDialler({
    store: parts.store,
    coord,
    campaigns: new CampaignService(parts.store, { announce, clock }),
    pacer: new Pacer(parts.store, coord, clock),
    liveCallCeiling: parts.slots.ceiling,
    wakeCallDialers: () => {
      coord.publish(CALLS_QUEUED_CHANNEL, '').catch(() => {});
    },
    announce,
    clock,
    pollMs: parts.config.campaignPollMs,
    leaderLockTtlMs: parts.config.campaignLeaderLockMs,
    reportError: unlessRedisAway((err) => logger.error({ err }, 'campaign dialler failed')),
    onDecision: ({ campaignId, workspaceId, what }) =>
      logger.info({ campaign_id: campaignId, workspace_id: workspaceId }, `campaign ${what}`),
    onLead: ({ campaignId, workspaceId }) =>
      logger.info(
        { campaign_id: campaignId, workspace_id: workspaceId },
        'campaign dialler leads this campaign',
      ),
  });
  await dialler.start();
  teardown.add(() => dialler.stop());
  return dialler;
}

/** The sandbox's incoming calls (`simulate-incoming`): one worker rings each through its simulated callers. */
async function startSimulatedCallers(
  parts: SharedParts,
  sandbox: SandboxCarrier,
  teardown: Teardown,
): Promise<void> {
  const unsubscribe = await onSimulatedIncoming(
    parts.coord,
    (incoming) =>
      sandbox.ringIn({ id: incoming.callId, workspaceId: incoming.workspaceId }, incoming.carrierCallId),
    unlessRedisAway((err) => parts.logger.error({ err }, 'ringing a simulated incoming call failed')),
  );
  teardown.add(unsubscribe);
}

/** How often a worker renews and releases phone numbers (one worker at a time, under a coordinator lock). */
const RENEWAL_SWEEP_MS = 60_000;

/** Renews managed numbers from the wallet and releases those whose time is up: one worker at a time. */
function startNumberRenewals(parts: SharedParts, teardown: Teardown): void {
  const { logger } = parts;
  const renewals = new NumberRenewals({
    store: parts.store,
    providers: { sandbox: new SandboxTelephony() },
    logger: logger.child({ job: 'number-renewals' }),
    clock: parts.clock,
  });
  let running: Promise<void> | undefined;
  const sweep = async () => {
    const lock = await parts.coord.lock('number-renewals', RENEWAL_SWEEP_MS).catch(() => null);
    if (!lock) return;
    try {
      await renewals.sweep();
    } catch (err) {
      logger.error({ err }, 'phone number renewals failed');
    } finally {
      await lock.release().catch(() => undefined);
    }
  };
  const tick = () => {
    running ??= sweep().finally(() => {
      running = undefined;
    });
  };
  tick();
  const timer = setInterval(tick, RENEWAL_SWEEP_MS);
  teardown.add(async () => {
    clearInterval(timer);
    await running;
  });
}

/** Runs flow test jobs: new ones, and those a dead worker left (their claim lapsed). */
function startFlowJobs(parts: SharedParts, teardown: Teardown): void {
  const settings = parts.config.flowJobs;
  const worker = new FlowJobWorker({
    store: parts.store,
    models: buildFlowModels(parts.config),
    simulate: simulateCall,
    maxTurns: settings.maxTurns,
    leaseMs: settings.leaseMs,
    logger: parts.logger.child({ job: 'flow-tests' }),
    owner: parts.config.nodeId,
    pollMs: settings.pollMs,
    concurrency: settings.concurrency,
    now: () => parts.clock.now(),
  });
  worker.start();
  teardown.add(() => worker.stop());
}

/**
 * Runs transcription jobs (new ones, and those a dead worker left) on this node's speech engines, and deletes
 * those past their 30 days. A worker without an STT engine takes none: another worker, or none, runs them.
 */
async function startTranscriptionJobs(
  parts: SharedParts,
  engines: CallEngines,
  teardown: Teardown,
  webhookCa: string | undefined,
): Promise<void> {
  const stt = engines.engines.stt;
  if (!stt) {
    parts.logger.warn('transcription jobs: no speech engine on this worker, so it runs none');
    return;
  }
  const settings = parts.config.transcriptionJobs;
  const worker = new TranscriptionWorker({
    store: parts.store,
    audio: new TranscriptionAudio(path.join(parts.config.dataDir, 'transcriptions')),
    decode: decodeTranscriptionRecording,
    transcriber: recordingTranscriber({ stt, vad: engines.engines.vad }),
    clock: parts.clock,
    logger: parts.logger.child({ job: 'transcriptions' }),
    owner: parts.config.nodeId,
    pollMs: settings.pollMs,
    leaseMs: settings.leaseMs,
    concurrency: settings.concurrency,
    allowPrivate: parts.config.allowPrivateWebhooks,
    extraCa: webhookCa,
    coord: parts.coord,
  });
  await worker.start();
  teardown.add(() => worker.stop());
}
