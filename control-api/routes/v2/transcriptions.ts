import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import { ApiError } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import { SPEECH_LANGUAGES } from '../../../core/speech/languages.ts';
import { billedAudioSeconds, transcriptionCost } from '../../../core/speech/prices.ts';
import type { TranscriptionCharges } from '../../../core/speech/transcription-charges.ts';
import { TRANSCRIPTION_MAX_BYTES, type TranscriptionJobs } from '../../../core/speech/transcription-jobs.ts';
import type {
  TranscriptionRecord,
  TranscriptionSegmentRecord,
} from '../../../core/store/transcription-types.ts';
import { RECORDING_MEDIA_TYPES } from '../../../engines/stt/recording.ts';
import {
  type DecodedRecording,
  decodeTranscriptionRecording,
  type RecordingTranscriber,
  type TranscribedRecording,
} from '../../../engines/stt/recording-transcriber.ts';
import { MultipartError, multipartBoundary, parseMultipart } from '../../http/multipart.ts';
import { listBody, listEnvelope, listQuery, resolveCursor } from '../../http/pagination.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { setEnvelopeErrorHandler } from '../../plugins/errors.ts';
import { idParams, timestamp } from '../../schemas/common.ts';

/** The one-shot form takes recordings up to this long. */
export const SYNC_MAX_SECONDS = 60;
/** A minute of 48 kHz stereo PCM16 WAV, with room for its header. */
const SYNC_BODY_LIMIT_BYTES = 12 * 1024 * 1024;
/** An upload of the largest recording a job takes, with room for the form's other fields. */
const JOB_BODY_LIMIT_BYTES = TRANSCRIPTION_MAX_BYTES + 64 * 1024;

const languageCode = z
  .enum(SPEECH_LANGUAGES)
  .default('en-IN')
  .describe('the language spoken (written as spoken, never translated); default en-IN');

const query = z.object({ language_code: languageCode }).strict();

const jobBody = z
  .object({
    audio_url: z
      .string()
      .min(1)
      .max(2048)
      .describe('an https:// URL of the recording, fetched by the worker through the outbound address guard'),
    language_code: languageCode,
  })
  .strict();

const STATUSES = ['queued', 'running', 'completed', 'degraded', 'failed'] as const;

const segmentSchema = z.object({
  speaker: z
    .string()
    .describe(
      '`speaker_1`, `speaker_2`: one per channel of a two-channel recording; in a mono one, the voice clusters (speaker_1 speaks first)',
    ),
  start_ms: z.number().int(),
  end_ms: z.number().int(),
  text: z.string(),
  language: z.string().describe('what the engine reports, else the language asked for'),
});

const transcriptionSchema = z.object({
  id: z.string(),
  object: z.literal('transcription'),
  status: z
    .enum(STATUSES)
    .describe(
      '`queued`, `running`, then `completed` (billed), `degraded` (free: speakers could not be told apart) or `failed` (free)',
    ),
  language_code: z.enum(SPEECH_LANGUAGES),
  duration_secs: z.number().nullable().describe('null until the audio was read (a job from a URL)'),
  channels: z.number().int().nullable(),
  speakers_method: z
    .enum(['channels', 'voice_clusters', 'none'])
    .nullable()
    .describe('how speakers were told apart; null until the job ended'),
  segments: z.array(segmentSchema),
  failure: z.string().nullable(),
  cost_paise: z.number().int(),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
});

type TranscriptionBody = z.output<typeof transcriptionSchema>;

export interface TranscriptionDeps {
  /** The node's STT with its VAD; undefined on a node that runs no speech engines (the sync form answers 501). */
  transcriber: RecordingTranscriber | undefined;
  charges: TranscriptionCharges;
  jobs: TranscriptionJobs;
  clock?: Clock;
}

const segmentBody = (s: TranscriptionSegmentRecord) => ({
  speaker: s.speaker,
  start_ms: s.startMs,
  end_ms: s.endMs,
  text: s.text,
  language: s.language,
});

function jobBodyOf(job: TranscriptionRecord): TranscriptionBody {
  return {
    id: job.id,
    object: 'transcription',
    status: job.status,
    language_code: job.languageCode as TranscriptionBody['language_code'],
    duration_secs: job.durationMs === null ? null : job.durationMs / 1000,
    channels: job.channels,
    speakers_method: job.speakersMethod,
    segments: job.segments.map(segmentBody),
    failure: job.failure,
    cost_paise: job.costPaise,
    created_at: isoTime(job.createdAt),
    completed_at: job.endedAt === null ? null : isoTime(job.endedAt),
  };
}

const params = idParams('transcription');
const AUDIO_TYPES = [...RECORDING_MEDIA_TYPES];

/**
 * Transcriptions: the asynchronous jobs (`POST /v2/transcriptions` -> 202, run by the worker role; read, list,
 * delete) and the one-shot form (`POST /v2/transcriptions/sync`, at most a minute, in the request).
 */
export function registerTranscriptionRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TranscriptionDeps,
): void {
  registerJobCreation(app, registry, deps);
  registerOneShot(app, registry, deps);
  registerJobReads(app, registry, deps);
}

/** `POST /v2/transcriptions`: an upload (multipart or the audio as the body, up to 100 MB) or an `audio_url`. */
function registerJobCreation(app: FastifyInstance, registry: RouteRegistry, deps: TranscriptionDeps): void {
  app.register(async (scoped) => {
    // Its 413 names its own limit.
    setEnvelopeErrorHandler(scoped, { bodyLimitBytes: JOB_BODY_LIMIT_BYTES });
    scoped.addContentTypeParser(
      [...AUDIO_TYPES, 'multipart/form-data'],
      { parseAs: 'buffer', bodyLimit: JOB_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    defineRoute(scoped, registry, {
      method: 'POST',
      url: '/transcriptions',
      operationId: 'createTranscription',
      summary:
        'Queue a transcription job (202): a recording uploaded (multipart `file`, or the audio itself as the body) or fetched from `audio_url`; speakers, times, language per segment, cost',
      tag: 'Speech',
      query: z.object({ language_code: languageCode.optional() }).strict(),
      body: jobBody,
      streamedBody: {
        contentType: 'multipart/form-data',
        otherContentTypes: AUDIO_TYPES,
        description:
          'The recording, up to 100 MB: as the form field `file` (with an optional field `language_code`), or as the body itself (`audio/wav`, `audio/ogg`, `audio/mpeg`, `audio/basic`; `?language_code=`). WAV (16-bit PCM, mu-law or A-law), Ogg Opus, MP3, or raw 8 kHz mu-law; one or two channels.',
      },
      responses: { 202: { description: 'The job, queued', schema: transcriptionSchema } },
      errors: ['invalid_request', 'insufficient_balance', 'body_too_large'],
      handler: async ({ auth, query: q, body, request, reply }) => {
        const job = isJsonRequest(request)
          ? await deps.jobs.createFromUrl(
              auth.workspaceId,
              q.language_code ?? body.language_code,
              body.audio_url,
            )
          : await uploadJob(deps.jobs, auth.workspaceId, q.language_code, request);
        reply.code(202);
        return jobBodyOf(job);
      },
    });
  });
}

/** `POST /v2/transcriptions/sync`: at most a minute of audio, transcribed in the request. */
function registerOneShot(app: FastifyInstance, registry: RouteRegistry, deps: TranscriptionDeps): void {
  app.register(async (scoped) => {
    setEnvelopeErrorHandler(scoped, { bodyLimitBytes: SYNC_BODY_LIMIT_BYTES });
    scoped.addContentTypeParser(
      AUDIO_TYPES,
      { parseAs: 'buffer', bodyLimit: SYNC_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    defineRoute(scoped, registry, {
      method: 'POST',
      url: '/transcriptions/sync',
      operationId: 'transcribeSync',
      summary:
        'Transcribe one recording (at most 60 s) in this request: speakers, times, language per segment, cost',
      tag: 'Speech',
      query,
      streamedBody: {
        contentType: 'audio/wav',
        otherContentTypes: AUDIO_TYPES.filter((t) => t !== 'audio/wav'),
        description:
          'The recording: WAV (16-bit PCM, 8-bit mu-law or A-law; one or two channels; up to 12 MB), Ogg Opus, MP3 (`audio/mpeg`), or `audio/basic` (raw 8 kHz mu-law)',
      },
      responses: { 200: { description: 'The finished transcription', schema: transcriptionSchema } },
      errors: ['invalid_request', 'insufficient_balance', 'not_implemented', 'body_too_large'],
      handler: async ({ auth, query, request }) =>
        transcribeNow(deps, auth.workspaceId, query.language_code, recordingOf(request)),
    });
  });
}

/** List, read and delete. */
function registerJobReads(app: FastifyInstance, registry: RouteRegistry, deps: TranscriptionDeps): void {
  defineRoute(app, registry, {
    method: 'GET',
    url: '/transcriptions',
    operationId: 'listTranscriptions',
    summary: 'List transcriptions of the last 30 days, newest first (cursor-paginated)',
    tag: 'Speech',
    query: listQuery('transcription'),
    responses: {
      200: { description: 'A page of transcriptions', schema: listEnvelope(transcriptionSchema) },
    },
    errors: ['invalid_request'],
    handler: async ({ auth, query: q }) => {
      const page = await deps.jobs.list(auth.workspaceId, {
        limit: q.limit,
        after: resolveCursor(q, 'transcription'),
      });
      return listBody(page.items.map(jobBodyOf), page.hasMore, (t) => t.id);
    },
  });
  defineRoute(app, registry, {
    method: 'GET',
    url: '/transcriptions/:id',
    operationId: 'getTranscription',
    summary: 'Read a transcription job: its status and, once ended, its segments and cost',
    tag: 'Speech',
    params,
    responses: { 200: { description: 'The transcription', schema: transcriptionSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params: p }) => jobBodyOf(await deps.jobs.get(auth.workspaceId, p.id)),
  });
  defineRoute(app, registry, {
    method: 'DELETE',
    url: '/transcriptions/:id',
    operationId: 'deleteTranscription',
    summary:
      'Delete a transcription: its audio and text (a job not ended yet is stopped, free); the ledger entry of a completed one stays',
    tag: 'Speech',
    params,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({ id: z.string(), object: z.literal('transcription'), deleted: z.literal(true) }),
      },
    },
    errors: ['not_found'],
    handler: async ({ auth, params: p }) => {
      await deps.jobs.delete(auth.workspaceId, p.id);
      return { id: p.id, object: 'transcription' as const, deleted: true as const };
    },
  });
}

function isJsonRequest(request: FastifyRequest): boolean {
  const type = (request.headers['content-type'] ?? '').toLowerCase();
  return !type.startsWith('multipart/form-data') && !AUDIO_TYPES.some((t) => type.startsWith(t));
}

function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

async function uploadJob(
  jobs: TranscriptionJobs,
  workspaceId: string,
  language: TranscriptionBody['language_code'] | undefined,
  request: FastifyRequest,
): Promise<TranscriptionRecord> {
  if (!Buffer.isBuffer(request.body)) throw new ApiError('invalid_request', 'body: the recording is missing');
  const mediaType = mediaTypeOf(request);
  if (mediaType !== 'multipart/form-data')
    return jobs.createFromUpload(workspaceId, language ?? 'en-IN', { bytes: request.body, mediaType });
  const boundary = multipartBoundary(request.headers['content-type']);
  if (!boundary) throw new ApiError('invalid_request', 'Content-Type: multipart/form-data needs a boundary');
  let parts: ReturnType<typeof parseMultipart>;
  try {
    parts = parseMultipart(request.body, boundary);
  } catch (error) {
    if (error instanceof MultipartError) throw new ApiError('invalid_request', `body: ${error.message}`);
    throw error;
  }
  const file = parts.find((p) => p.name === 'file');
  if (!file || file.data.length === 0)
    throw new ApiError('invalid_request', 'file: is required (the recording, as the form field `file`)');
  const unknown = parts.find((p) => p.name !== 'file' && p.name !== 'language_code');
  if (unknown) throw new ApiError('invalid_request', `${unknown.name}: is not a field of this form`);
  const field = parts
    .find((p) => p.name === 'language_code')
    ?.data.toString('utf8')
    .trim();
  const parsed = field === undefined ? undefined : languageCode.safeParse(field);
  if (parsed && !parsed.success)
    throw new ApiError('invalid_request', `language_code: must be one of ${SPEECH_LANGUAGES.join(', ')}`);
  return jobs.createFromUpload(workspaceId, parsed?.data ?? language ?? 'en-IN', {
    bytes: file.data,
    mediaType: file.contentType ?? null,
  });
}

function recordingOf(request: FastifyRequest): { bytes: Buffer; mediaType: string } {
  const mediaType = mediaTypeOf(request);
  if (!(AUDIO_TYPES as readonly string[]).includes(mediaType) || !Buffer.isBuffer(request.body))
    throw new ApiError(
      'invalid_request',
      'body: send the recording itself as audio/wav (WAV), audio/ogg (Ogg Opus), audio/mpeg (MP3) or audio/basic (raw 8 kHz mu-law)',
    );
  return { bytes: request.body, mediaType };
}

async function transcribeNow(
  deps: TranscriptionDeps,
  workspaceId: string,
  language: (typeof SPEECH_LANGUAGES)[number],
  recording: { bytes: Buffer; mediaType: string },
): Promise<TranscriptionBody> {
  const transcriber = deps.transcriber;
  if (!transcriber) throw new ApiError('not_implemented', 'transcriptions need a speech engine on this node');
  let audio: DecodedRecording;
  try {
    audio = await decodeTranscriptionRecording(recording.bytes, recording.mediaType);
  } catch (error) {
    throw new ApiError('invalid_request', `body: ${(error as Error).message}`);
  }
  const durationMs = audio.durationMs;
  if (durationMs > SYNC_MAX_SECONDS * 1000)
    throw new ApiError(
      'invalid_request',
      `body: ${Math.ceil(durationMs / 1000)} s of audio; the sync form takes ${SYNC_MAX_SECONDS} s`,
    );
  if (!transcriber.transcribes(language))
    throw new ApiError('invalid_request', `language_code: no speech engine here transcribes ${language}`);
  const clock = deps.clock ?? systemClock;
  const id = newId('transcription', clock.now());
  const seconds = billedAudioSeconds(durationMs);
  const cost = transcriptionCost(seconds);
  if (cost > 0 && !(await deps.charges.reserve(workspaceId, id, cost)))
    throw new ApiError(
      'insufficient_balance',
      `the wallet cannot cover ${seconds} s of audio (${cost} paise)`,
    );
  let heard: TranscribedRecording | undefined;
  let failure: string | null = null;
  try {
    heard = await transcriber.transcribe(audio, language);
  } catch (error) {
    failure = `the speech engine failed: ${(error as Error).message}`;
  }
  const status = heard?.status ?? 'failed';
  const charged =
    cost > 0
      ? await deps.charges.settle(
          workspaceId,
          id,
          status === 'completed',
          `Transcription, ${seconds} s of audio`,
        )
      : 0;
  const now = isoTime(clock.now());
  return {
    id,
    object: 'transcription',
    status,
    language_code: language,
    duration_secs: Math.round(durationMs) / 1000,
    channels: audio.channels,
    speakers_method: heard?.speakersMethod ?? null,
    segments: (heard?.segments ?? []).map(segmentBody),
    failure,
    cost_paise: charged,
    created_at: now,
    completed_at: now,
  };
}
