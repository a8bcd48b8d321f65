import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AgentService } from '../../../core/agents/service.ts';
import { GatewayFleet } from '../../../core/calls/fleet.ts';
import type { IncomingCalls } from '../../../core/calls/incoming.ts';
import { CAMPAIGNS_STARTED_CHANNEL } from '../../../core/campaigns/dialler.ts';
import { DncList } from '../../../core/campaigns/dnc.ts';
import { CampaignService } from '../../../core/campaigns/service.ts';
import { systemClock } from '../../../core/clock.ts';
import { announceThrough } from '../../../core/events/announce.ts';
import { FlowDrafts } from '../../../core/flows/generate.ts';
import { NO_FLOW_MODELS } from '../../../core/flows/jobs/models.ts';
import { FlowJobService } from '../../../core/flows/jobs/service.ts';
import { FlowTranscripts } from '../../../core/flows/transcribe.ts';
import { SecretCipher } from '../../../core/secrets/cipher.ts';
import { SecretService } from '../../../core/secrets/service.ts';
import { SpeechCharges } from '../../../core/speech/speech-charges.ts';
import { TranscriptionAudio } from '../../../core/speech/transcription-audio.ts';
import { TranscriptionCharges } from '../../../core/speech/transcription-charges.ts';
import { TRANSCRIPTIONS_QUEUED_CHANNEL, TranscriptionJobs } from '../../../core/speech/transcription-jobs.ts';
import { NumberService } from '../../../core/telephony/numbers.ts';
import { Pacer } from '../../../core/telephony/pacing.ts';
import { PoolService } from '../../../core/telephony/pools.ts';
import { TelephonyProviders } from '../../../core/telephony/providers.ts';
import { RentalService } from '../../../core/telephony/rental.ts';
import { SandboxTelephony } from '../../../core/telephony/sandbox.ts';
import { SimulatedIncomingCalls } from '../../../core/telephony/simulated-calls.ts';
import type { TwilioAccounts } from '../../../core/telephony/twilio-account.ts';
import {
  decodeTranscriptionRecording,
  recordingTranscriber,
} from '../../../engines/stt/recording-transcriber.ts';
import type { ApiDeps } from '../../app.ts';
import type { RouteRegistry } from '../../http/route.ts';
import { registerBearerAuth } from '../../plugins/auth.ts';
import { registerCampaignsSwitch } from '../../plugins/campaigns-switch.ts';
import { setEnvelopeErrorHandler, setEnvelopeNotFound } from '../../plugins/errors.ts';
import { registerRateLimit } from '../../plugins/rate-limit.ts';
import { TWILIO_VOICE_PATH } from '../carriers/twilio-voice.ts';
import { registerAgentRoutes } from './agents.ts';
import { registerCallRoutes } from './calls.ts';
import { registerCampaignRoutes } from './campaigns.ts';
import { registerDncRoutes } from './dnc.ts';
import { registerFlowJobRoutes } from './flow-jobs.ts';
import { registerLiveCallRoutes } from './live-calls.ts';
import { registerNotLiveRoutes } from './not-live.ts';
import { registerPhoneNumberRoutes } from './phone-numbers.ts';
import { registerPhonePoolRoutes } from './phone-pools.ts';
import { registerAgentRevisionRoutes } from './revisions.ts';
import { registerSecretRoutes } from './secrets.ts';
import { registerSpeechRoutes } from './speech.ts';
import { registerStreamTokenRoutes } from './stream-tokens.ts';
import { registerTelephonyRoutes } from './telephony.ts';
import { registerTranscriptionRoutes } from './transcriptions.ts';
import { registerVoiceRoutes } from './voices.ts';
import { registerWalletRoutes } from './wallet.ts';

export const V2_PREFIX = '/v2';

/**
 * The v2 product as one encapsulated plugin: its Bearer-key authentication, per-key rate limit, `{error}`
 * envelope (errors and unknown routes) and routes apply under `/v2` only, so a sibling product (legacy v1)
 * keeps its own headers and bodies.
 */
/** What incoming calls share with the carriers' routes: customers' Twilio accounts and call admission. */
export interface IncomingParts {
  accounts: TwilioAccounts;
  calls: IncomingCalls;
}

export function registerV2(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: ApiDeps,
  incoming: IncomingParts,
): void {
  app.register(
    async (v2) => {
      setEnvelopeErrorHandler(v2, { bodyLimitBytes: deps.config.bodyLimitBytes });
      setEnvelopeNotFound(v2);
      registerBearerAuth(v2, deps.store.apiKeys);
      registerCampaignsSwitch(v2, deps.store);
      registerRateLimit(v2, deps.coord, {
        ratePerSec: deps.config.apiRatePerSec,
        burst: deps.config.apiRateBurst,
      });
      const secrets = new SecretService(deps.store, new SecretCipher(deps.secretKey));
      const telephony = telephonyServices(deps, incoming);
      const agents = new AgentService(
        deps.store,
        deps.voices,
        async (workspaceId) => ({
          secrets: await secrets.names(workspaceId),
          allowPrivate: deps.config.allowPrivateWebhooks,
        }),
        (workspaceId, poolId) => telephony.pools.exists(workspaceId, poolId),
      );
      registerAgentRoutes(v2, registry, agents);
      registerSecretRoutes(v2, registry, secrets);
      registerAgentRevisionRoutes(v2, registry, agents);
      registerVoiceRoutes(v2, registry, deps.voices);
      registerWalletRoutes(v2, registry, deps.store);
      registerCallRoutes(v2, registry, { ...deps, pacer: telephony.pacer });
      registerPhoneNumberRoutes(v2, registry, telephony.numbers, telephony.simulated);
      registerPhonePoolRoutes(v2, registry, telephony.pools);
      registerTelephonyRoutes(v2, registry, telephony.rental, telephony.numbers);
      registerLiveCallRoutes(v2, registry, deps);
      registerDncRoutes(v2, registry, new DncList(deps.store));
      registerCampaignRoutes(
        v2,
        registry,
        new CampaignService(deps.store, {
          announce: announceThrough(deps.coord),
          clock: deps.clock,
          fleetSize: () => new GatewayFleet(deps.coord).size(),
          wakeDiallers: () => {
            deps.coord.publish(CAMPAIGNS_STARTED_CHANNEL, '').catch(() => {});
          },
        }),
      );
      registerStreamTokenRoutes(v2, registry, deps);
      registerSpeechProducts(v2, registry, deps);
      registerFlowJobProducts(v2, registry, deps);
      registerNotLiveRoutes(v2, registry);
    },
    { prefix: V2_PREFIX },
  );
}

/** Text to speech and transcriptions (one-shot and jobs). */
function registerSpeechProducts(v2: FastifyInstance, registry: RouteRegistry, deps: ApiDeps): void {
  registerSpeechRoutes(v2, registry, {
    speaker: deps.speaker,
    charges: new SpeechCharges(deps.store),
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
  const transcriber = deps.transcriber?.stt
    ? recordingTranscriber({ stt: deps.transcriber.stt, vad: deps.transcriber.vad })
    : undefined;
  registerTranscriptionRoutes(v2, registry, {
    transcriber,
    charges: new TranscriptionCharges(deps.store),
    jobs: new TranscriptionJobs(
      deps.store,
      new TranscriptionAudio(path.join(deps.config.dataDir, 'transcriptions')),
      deps.clock ?? systemClock,
      {
        allowPrivate: deps.config.allowPrivateWebhooks,
        decode: decodeTranscriptionRecording,
        transcriber,
        wake: () => {
          deps.coord.publish(TRANSCRIPTIONS_QUEUED_CHANNEL, '').catch(() => {});
        },
      },
    ),
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
}

/** Flow tests, drafts and transcripts. */
function registerFlowJobProducts(v2: FastifyInstance, registry: RouteRegistry, deps: ApiDeps): void {
  const flowModels = deps.flowModels ?? NO_FLOW_MODELS;
  const clock = deps.clock ?? systemClock;
  registerFlowJobRoutes(
    v2,
    registry,
    new FlowJobService(deps.store, flowModels, clock),
    new FlowDrafts(
      deps.store,
      flowModels,
      clock,
      Math.min(deps.flowDraftWaitMs ?? 20_000, deps.config.apiHttp.answerTimeoutMs - 1_000),
    ),
    new FlowTranscripts(deps.store, deps.artifacts),
  );
}

/** Numbers, pools and the rent flow, on the sandbox provider (production workspaces have none configured yet). */
function telephonyServices(deps: ApiDeps, incoming: IncomingParts) {
  const providers = new TelephonyProviders(deps.store, {
    sandbox: new SandboxTelephony(),
    twilio: { accounts: incoming.accounts, statusCallbackOf: (voiceUrl) => `${voiceUrl}/status` },
  });
  const pacer = new Pacer(deps.store, deps.coord, deps.clock);
  const base = (deps.config.publicApiUrl ?? 'http://localhost').replace(/\/+$/, '');
  return {
    pacer,
    numbers: new NumberService(
      deps.store,
      providers,
      pacer,
      (numberId, provider) =>
        provider === 'twilio'
          ? `${base}${TWILIO_VOICE_PATH}/${numberId}`
          : `${base}/carriers/sandbox/voice/${numberId}`,
      deps.clock,
    ),
    pools: new PoolService(deps.store, providers),
    simulated: new SimulatedIncomingCalls({
      store: deps.store,
      providers,
      incoming: incoming.calls,
      coord: deps.coord,
      logger: deps.logger.child({ component: 'incoming_calls' }),
    }),
    rental: new RentalService(deps.store, providers, deps.clock),
  };
}
