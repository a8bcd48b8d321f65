import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defaultMaxCalls } from './calls/capacity.ts';

/**
 * The only reader of process.env. Parses, defaults and validates every setting once, then freezes it.
 * Every variable is documented in README.md ("Configuration").
 */
const ROLES = ['api', 'gateway', 'worker'] as const;
export type Role = (typeof ROLES)[number];

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
/** The interface promises an answer within 30 s, so no API connection waits longer than that. */
const apiTimeout = z.coerce.number().int().min(50).max(30_000);
/** A comma-separated list of delays in ms, e.g. `0,1000,10000`. */
const delayList = z
  .string()
  .regex(/^\s*\d+\s*(,\s*\d+\s*)*$/, 'expected a comma-separated list of milliseconds')
  .transform((text) => text.split(',').map((part) => Number(part.trim())))
  .refine((delays) => delays[0] === 0, 'the first attempt is immediate: start the list with 0');

/** USD per million tokens, `input,output`, e.g. `0.30,2.50`. */
const usdRates = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*,\s*\d+(\.\d+)?\s*$/, 'expected "input,output" in USD per million tokens')
  .transform((text) => text.split(',').map((part) => Number(part.trim())) as [number, number]);

/** The settings of one reviewing model of flow jobs (README "Flow tests"). */
function flowModelEnv<K extends FlowModelKey>(key: K) {
  return {
    [`FLOW_${key}_MODEL`]: z.string().min(1).max(200).optional(),
    [`FLOW_${key}_BASE_URL`]: z.string().url().optional(),
    [`FLOW_${key}_API_KEY`]: z.string().optional(),
    [`FLOW_${key}_USD_PER_M`]: usdRates.optional(),
  } as Record<`FLOW_${K}_${'MODEL' | 'BASE_URL' | 'API_KEY'}`, z.ZodOptional<z.ZodString>> &
    Record<`FLOW_${K}_USD_PER_M`, z.ZodOptional<typeof usdRates>>;
}

const envSchema = z.object({
  NODE_ENV: z.string().default('production'),
  CI: flag.default(false),
  HOST: z.string().default('0.0.0.0'),
  PORT: port.default(8080),
  GATEWAY_PORT: port.default(8081),
  ROLES: z.string().default('api,gateway,worker'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase SQL identifier')
    .optional(),
  REDIS_URL: z.string().url().optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,64}$/)
    .default('voiceagent'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_API_URL: z.string().url().optional(),
  PUBLIC_GATEWAY_URL: z.string().url().optional(),
  V1_HOST: z.string().optional(),
  V1_PORT: port.optional(),
  API_RATE_PER_SEC: positiveInt.default(10),
  API_RATE_BURST: positiveInt.default(20),
  BODY_LIMIT_BYTES: positiveInt.default(1_048_576),
  API_HEADERS_TIMEOUT_MS: apiTimeout.default(10_000),
  API_REQUEST_TIMEOUT_MS: apiTimeout.default(20_000),
  API_ANSWER_TIMEOUT_MS: apiTimeout.default(25_000),
  API_IDLE_TIMEOUT_MS: apiTimeout.default(30_000),
  API_KEEP_ALIVE_TIMEOUT_MS: apiTimeout.default(5_000),
  API_MAX_HEADER_BYTES: z.coerce.number().int().min(1_024).max(65_536).default(16_384),
  BOOTSTRAP_BALANCE_INR: nonNegativeInt.default(500),
  ALLOW_PRIVATE_WEBHOOKS: flag.default(false),
  WEBHOOK_RETRY_SCHEDULE_MS: delayList.default([0, 1_000, 10_000, 60_000, 300_000, 1_800_000]),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(5_000),
  GATEWAY_ALLOW_FALLBACK: flag.default(false),
  GATEWAY_REUSE_PORT: flag.default(false),
  GATEWAY_MAX_CALLS: z.coerce.number().int().min(1).max(100_000).optional(),
  GATEWAY_MAX_LOOP_LAG_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  SHUTDOWN_DRAIN_MS: nonNegativeInt.default(30_000),
  STARTUP_WAIT_MS: z.coerce.number().int().min(0).max(3_600_000).default(120_000),
  SECRET_KEY: z.string().min(32).optional(),
  NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .optional(),
  LLM_PROVIDER: z.enum(['scripted', 'openai']).default('scripted'),
  LLM_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  STT_PROVIDER: z.enum(['auto', 'sphinx', 'openai', 'deepgram']).default('auto'),
  STT_BASE_URL: z.string().url().optional(),
  STT_API_KEY: z.string().optional(),
  STT_MODEL: z.string().min(1).optional(),
  SPHINX_MODEL_DIR: z.string().min(1).optional(),
  TTS_BASE_URL: z.string().url().optional(),
  TTS_API_KEY: z.string().optional(),
  SANDBOX_RING_MS: positiveInt.default(3_000),
  SANDBOX_ANSWER_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(400),
  LIVE_CALL_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(90_000),
  CAMPAIGN_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  CAMPAIGN_LEADER_LOCK_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  // At most the longest a stream token may live (core/auth/stream-tokens.ts MAX_TOKEN_TTL_MS).
  WEB_CALL_JOIN_MS: z.coerce.number().int().min(1_000).max(600_000).default(600_000),
  ...flowModelEnv('FLASH'),
  ...flowModelEnv('OPUS'),
  ...flowModelEnv('SOL'),
  FLOW_JOB_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  FLOW_JOB_LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(30_000),
  FLOW_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  TRANSCRIPTION_JOB_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  TRANSCRIPTION_JOB_LEASE_MS: z.coerce.number().int().min(200).max(600_000).default(60_000),
  TRANSCRIPTION_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  FLOW_SIM_MAX_TURNS: z.coerce.number().int().min(1).max(60).default(16),
  FLOW_MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(120_000),
  FLOW_DRAFT_WAIT_MS: z.coerce.number().int().min(0).max(29_000).default(20_000),
  TWILIO_API_BASE: z.string().url().default('https://api.twilio.com'),
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'expected AC followed by 32 hex characters')
    .optional(),
  TWILIO_AUTH_TOKEN: z.string().min(16).optional(),
  TWILIO_FROM_NUMBER: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'expected an E.164 number')
    .optional(),
});

/** The reviewing models a flow job may ask for, by the settings' key. */
export const FLOW_MODEL_KEYS = ['FLASH', 'OPUS', 'SOL'] as const;
export type FlowModelKey = (typeof FLOW_MODEL_KEYS)[number];

/** One OpenAI-compatible endpoint flow jobs review, revise, draft and play callers on. */
export interface FlowModelEndpoint {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  readonly model: string;
  /** USD per million input and output tokens, for answers that report no cost. */
  readonly usdPerMillion: readonly [number, number];
}

export interface FlowJobSettings {
  /** The reviewing models by key; undefined when not configured. */
  readonly models: Readonly<Record<FlowModelKey, FlowModelEndpoint | undefined>>;
  readonly pollMs: number;
  /** How long a worker's claim on a running job lasts without renewal: how soon another resumes it. */
  readonly leaseMs: number;
  /** Jobs one worker runs at once. */
  readonly concurrency: number;
  /** Agent turns of one simulated call at most. */
  readonly maxTurns: number;
  /** One model request, from sending to its last word. */
  readonly modelTimeoutMs: number;
  /** How long a draft request waits for its draft before answering 202 with the job. */
  readonly draftWaitMs: number;
}

export interface Config {
  readonly env: string;
  readonly ci: boolean;
  readonly host: string;
  readonly port: number;
  readonly gatewayPort: number;
  readonly roles: readonly Role[];
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** PostgreSQL schema for every table (created when missing); default `public`. */
  readonly databaseSchema: string | undefined;
  readonly redisUrl: string | undefined;
  /** Namespace of every Redis key and channel, so deployments can share one Redis. */
  readonly redisPrefix: string;
  readonly logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  readonly publicApiUrl: string | undefined;
  readonly publicGatewayUrl: string | undefined;
  readonly v1Host: string | undefined;
  /** A second port of the api role that serves only the legacy v1 product (deployments that route by port). */
  readonly v1Port: number | undefined;
  readonly apiRatePerSec: number;
  readonly apiRateBurst: number;
  readonly bodyLimitBytes: number;
  /** The control API's HTTP bounds: every wait on a client is at most 30 s (README "Configuration"). */
  readonly apiHttp: ApiHttpLimits;
  readonly bootstrapBalanceInr: number;
  readonly allowPrivateWebhooks: boolean;
  /** Delay before each webhook attempt (the first from the event, then after each failure); then dead letter. */
  readonly webhookRetryScheduleMs: readonly number[];
  /** Client timeout of one webhook attempt (connect to response); slower receivers count as failures. */
  readonly webhookTimeoutMs: number;
  readonly gatewayAllowFallback: boolean;
  /**
   * Let several processes listen on the gateway port at once (SO_REUSEPORT), for an operator who wants the
   * kernel to spread streams over them; otherwise a second gateway on a port in use fails to start.
   */
  readonly gatewayReusePort: boolean;
  /**
   * Calls one gateway process carries at most (`GATEWAY_MAX_CALLS`); by default derived from the measured CPU
   * of a call and the cores (core/calls/capacity.ts). Streams beyond it are refused, and dialers hold queued
   * calls while the fleet is full.
   */
  readonly gatewayMaxCalls: number;
  /** A gateway takes no new call while its event loop's p99 delay is above this, ms; 0: no such guard. */
  readonly gatewayMaxLoopLagMs: number;
  /** On SIGTERM/SIGINT, how long live calls may run on before they are ended as `node-shutdown`. */
  readonly shutdownDrainMs: number;
  /**
   * How long a starting node waits for PostgreSQL and Redis to answer (a node restarted during an outage of
   * seconds) before it gives up and exits; 0: it exits at the first refusal.
   */
  readonly startupWaitMs: number;
  /** Server-side secret for signing (stream tokens, recording URLs); generated and kept in DATA_DIR when unset. */
  readonly secretKey: string | undefined;
  /** This process's name among the deployment's nodes, kept on the calls it runs; default host and pid. */
  readonly nodeId: string;
  readonly engines: EngineConfig;
  /**
   * Lease of a live call's slot, renewed by the node running the call: how long a dead node's calls hold their
   * slots before recovery ends them.
   */
  readonly liveCallLeaseMs: number;
  /** How long the sandbox carrier's never-answering callee rings before `no_answer`. */
  readonly sandboxRingMs: number;
  /** How long every other sandbox callee rings before it answers (or reports busy or a carrier failure). */
  readonly sandboxAnswerDelayMs: number;
  /** How often a campaign's dialler looks at its calls and contacts without being woken. */
  readonly campaignPollMs: number;
  /** A campaign leader's lock: how soon a standby worker takes over a campaign whose leader died. */
  readonly campaignLeaderLockMs: number;
  /**
   * How long a browser has to join a web call, from its creation: the lifetime of its join token. A web call
   * nobody joined ends `no_answer` once this has passed.
   */
  readonly webCallJoinMs: number;
  /** `TWILIO_API_BASE`: Twilio's REST API, for the configured account and customers' imported numbers. */
  readonly twilioApiBase: string;
  /** Flow drafts and flow tests (README "Flow tests"). */
  readonly flowJobs: FlowJobSettings;
  /** Transcription jobs on the worker role (README "Speech APIs"). */
  readonly transcriptionJobs: {
    readonly pollMs: number;
    /** How long a worker's claim on a running job lasts without renewal: how soon another takes it over. */
    readonly leaseMs: number;
    /** Jobs one worker runs at once. */
    readonly concurrency: number;
  };
  /** The Twilio account production workspaces dial through; undefined when not configured. */
  readonly twilio:
    | {
        readonly apiBase: string;
        readonly accountSid: string;
        readonly authToken: string;
        readonly fromNumber: string;
      }
    | undefined;
}

export interface ApiHttpLimits {
  /** From connection (or the previous response) until the request's headers have arrived; over it, 408. */
  readonly headersTimeoutMs: number;
  /** From the request's first byte until its whole body has arrived; over it, 408. */
  readonly requestTimeoutMs: number;
  /** From the request's arrival until its answer starts; over it, 503 (a stream, once started, is not cut). */
  readonly answerTimeoutMs: number;
  /** A connection with no traffic either way this long is closed. */
  readonly idleTimeoutMs: number;
  /** How long a kept-alive connection waits for its next request. */
  readonly keepAliveTimeoutMs: number;
  /** Request line plus headers; over it, 431. */
  readonly maxHeaderBytes: number;
}

/** The speech and language engines calls run on (README "Engines"). */
export interface EngineConfig {
  readonly llm:
    | { readonly provider: 'scripted' }
    | {
        readonly provider: 'openai';
        readonly baseURL: string;
        readonly apiKey?: string;
        readonly model: string;
      };
  /** `auto`: PocketSphinx when installed. */
  readonly stt: {
    readonly provider: 'auto' | 'sphinx' | 'openai' | 'deepgram';
    readonly baseUrl?: string;
    readonly apiKey?: string;
    readonly model?: string;
    /** PocketSphinx's English model (`en-us/`, `en-us.lm.bin`, `cmudict-en-us.dict`); Debian's by default. */
    readonly sphinxModelDir?: string;
  };
  /** An OpenAI-compatible speech endpoint for the catalogue's `openai` voices; eSpeak NG voices always work. */
  readonly ttsOpenai?: { readonly baseURL: string; readonly apiKey?: string };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseRoles(text: string): Role[] {
  const roles = text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (roles.length === 0) throw new ConfigError('ROLES: name at least one of api, gateway, worker');
  for (const role of roles) {
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new ConfigError(`ROLES: unknown role "${role}" (expected api, gateway, worker)`);
    }
  }
  return [...new Set(roles)] as Role[];
}

function apiHttpOf(e: z.infer<typeof envSchema>): ApiHttpLimits {
  if (e.API_HEADERS_TIMEOUT_MS > e.API_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('API_HEADERS_TIMEOUT_MS: must not exceed API_REQUEST_TIMEOUT_MS');
  }
  // A stalled upload meets the request timeout (408) and a slow answer the answer timeout (503), both in the
  // envelope, before the idle timeout closes the connection without a word.
  if (e.API_ANSWER_TIMEOUT_MS < e.API_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('API_ANSWER_TIMEOUT_MS: must not be shorter than API_REQUEST_TIMEOUT_MS');
  }
  if (e.API_IDLE_TIMEOUT_MS <= e.API_ANSWER_TIMEOUT_MS) {
    throw new ConfigError('API_IDLE_TIMEOUT_MS: must be longer than API_ANSWER_TIMEOUT_MS');
  }
  return Object.freeze({
    headersTimeoutMs: e.API_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.API_REQUEST_TIMEOUT_MS,
    answerTimeoutMs: e.API_ANSWER_TIMEOUT_MS,
    idleTimeoutMs: e.API_IDLE_TIMEOUT_MS,
    keepAliveTimeoutMs: e.API_KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderBytes: e.API_MAX_HEADER_BYTES,
  });
}

function twilioOf(e: z.infer<typeof envSchema>): Config['twilio'] {
  const given = [e.TWILIO_ACCOUNT_SID, e.TWILIO_AUTH_TOKEN, e.TWILIO_FROM_NUMBER];
  if (given.every((v) => v === undefined)) return undefined;
  if (!e.TWILIO_ACCOUNT_SID || !e.TWILIO_AUTH_TOKEN || !e.TWILIO_FROM_NUMBER) {
    throw new ConfigError('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM_NUMBER go together');
  }
  return Object.freeze({
    apiBase: e.TWILIO_API_BASE,
    accountSid: e.TWILIO_ACCOUNT_SID,
    authToken: e.TWILIO_AUTH_TOKEN,
    fromNumber: e.TWILIO_FROM_NUMBER,
  });
}

function flowJobsOf(e: z.infer<typeof envSchema>): FlowJobSettings {
  const model = (key: FlowModelKey): FlowModelEndpoint | undefined => {
    const name = e[`FLOW_${key}_MODEL`];
    if (name === undefined) return undefined;
    // Without an endpoint of its own, a flow model is served where the live calls' model is.
    return Object.freeze({
      baseURL: e[`FLOW_${key}_BASE_URL`] ?? e.LLM_BASE_URL,
      apiKey: e[`FLOW_${key}_API_KEY`] ?? e.LLM_API_KEY,
      model: name,
      usdPerMillion: Object.freeze(e[`FLOW_${key}_USD_PER_M`] ?? [0, 0]) as readonly [number, number],
    });
  };
  return Object.freeze({
    models: Object.freeze({ FLASH: model('FLASH'), OPUS: model('OPUS'), SOL: model('SOL') }),
    pollMs: e.FLOW_JOB_POLL_MS,
    leaseMs: e.FLOW_JOB_LEASE_MS,
    concurrency: e.FLOW_JOB_CONCURRENCY,
    maxTurns: e.FLOW_SIM_MAX_TURNS,
    modelTimeoutMs: e.FLOW_MODEL_TIMEOUT_MS,
    draftWaitMs: e.FLOW_DRAFT_WAIT_MS,
  });
}

/** Parse a whole environment; unset and empty variables take their defaults. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  return Object.freeze({
    env: e.NODE_ENV,
    ci: e.CI,
    host: e.HOST,
    port: e.PORT,
    gatewayPort: e.GATEWAY_PORT,
    roles: Object.freeze(parseRoles(e.ROLES)),
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    logLevel: e.LOG_LEVEL,
    publicApiUrl: e.PUBLIC_API_URL,
    publicGatewayUrl: e.PUBLIC_GATEWAY_URL,
    v1Host: e.V1_HOST,
    v1Port: e.V1_PORT,
    apiRatePerSec: e.API_RATE_PER_SEC,
    apiRateBurst: e.API_RATE_BURST,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    apiHttp: apiHttpOf(e),
    bootstrapBalanceInr: e.BOOTSTRAP_BALANCE_INR,
    allowPrivateWebhooks: e.ALLOW_PRIVATE_WEBHOOKS,
    webhookRetryScheduleMs: Object.freeze(e.WEBHOOK_RETRY_SCHEDULE_MS),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    gatewayAllowFallback: e.GATEWAY_ALLOW_FALLBACK,
    gatewayReusePort: e.GATEWAY_REUSE_PORT,
    gatewayMaxCalls: e.GATEWAY_MAX_CALLS ?? defaultMaxCalls(os.availableParallelism()),
    gatewayMaxLoopLagMs: e.GATEWAY_MAX_LOOP_LAG_MS,
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    startupWaitMs: e.STARTUP_WAIT_MS,
    secretKey: e.SECRET_KEY,
    nodeId: e.NODE_ID ?? `${os.hostname()}-${process.pid}`,
    engines: Object.freeze({
      llm:
        e.LLM_PROVIDER === 'openai'
          ? {
              provider: 'openai' as const,
              baseURL: e.LLM_BASE_URL,
              model: e.LLM_MODEL,
              ...(e.LLM_API_KEY ? { apiKey: e.LLM_API_KEY } : {}),
            }
          : { provider: 'scripted' as const },
      stt: {
        provider: e.STT_PROVIDER,
        ...(e.STT_BASE_URL ? { baseUrl: e.STT_BASE_URL } : {}),
        ...(e.STT_API_KEY ? { apiKey: e.STT_API_KEY } : {}),
        ...(e.STT_MODEL ? { model: e.STT_MODEL } : {}),
        ...(e.SPHINX_MODEL_DIR ? { sphinxModelDir: e.SPHINX_MODEL_DIR } : {}),
      },
      ...(e.TTS_BASE_URL
        ? { ttsOpenai: { baseURL: e.TTS_BASE_URL, ...(e.TTS_API_KEY ? { apiKey: e.TTS_API_KEY } : {}) } }
        : {}),
    }),
    sandboxRingMs: e.SANDBOX_RING_MS,
    sandboxAnswerDelayMs: e.SANDBOX_ANSWER_DELAY_MS,
    liveCallLeaseMs: e.LIVE_CALL_LEASE_MS,
    campaignPollMs: e.CAMPAIGN_POLL_MS,
    campaignLeaderLockMs: e.CAMPAIGN_LEADER_LOCK_MS,
    webCallJoinMs: e.WEB_CALL_JOIN_MS,
    twilioApiBase: e.TWILIO_API_BASE,
    twilio: twilioOf(e),
    flowJobs: flowJobsOf(e),
    transcriptionJobs: Object.freeze({
      pollMs: e.TRANSCRIPTION_JOB_POLL_MS,
      leaseMs: e.TRANSCRIPTION_JOB_LEASE_MS,
      concurrency: e.TRANSCRIPTION_JOB_CONCURRENCY,
    }),
  });
}
