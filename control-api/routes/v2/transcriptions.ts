import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import { ApiError } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import { SPEECH_LANGUAGES } from '../../../core/speech/languages.ts';
import { billedAudioSeconds, transcriptionCost } from '../../../core/speech/prices.ts';
import type { TranscriptionCharges } from '../../../core/speech/transcription-charges.ts';
import { transcribesLanguage } from '../../../engines/stt/language.ts';
import {
  decodeRecording,
  RECORDING_MEDIA_TYPES,
  type RecordingSegment,
  recordingDurationMs,
  transcribeRecording,
} from '../../../engines/stt/recording.ts';
import type { SpeechToText } from '../../../engines/stt/types.ts';
import type { VoiceActivityDetector } from '../../../engines/vad/types.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { timestamp } from '../../schemas/common.ts';

/** The one-shot form takes recordings up to this long. */
export const SYNC_MAX_SECONDS = 60;
/** A minute of 48 kHz stereo PCM16 WAV, with room for its header. */
const SYNC_BODY_LIMIT_BYTES = 12 * 1024 * 1024;

const query = z
  .object({
    language_code: z
      .enum(SPEECH_LANGUAGES)
      .default('en-IN')
      .describe('the language spoken (written as spoken, never translated); default en-IN'),
  })
  .strict();

const segmentSchema = z.object({
  speaker: z.string().describe('`speaker_1`, `speaker_2`: one per channel of a two-channel recording'),
  start_ms: z.number().int(),
  end_ms: z.number().int(),
  text: z.string(),
  language: z.string().describe('what the engine reports, else the language asked for'),
});

const transcriptionSchema = z.object({
  id: z.string(),
  object: z.literal('transcription'),
  status: z
    .enum(['completed', 'degraded', 'failed'])
    .describe(
      '`degraded` (free): one channel, so speakers were not told apart; `failed` (free): the engine failed',
    ),
  language_code: z.enum(SPEECH_LANGUAGES),
  duration_secs: z.number(),
  channels: z.number().int(),
  segments: z.array(segmentSchema),
  failure: z.string().nullable(),
  cost_paise: z.number().int(),
  created_at: timestamp,
});

export interface TranscriptionDeps {
  /** The node's STT and VAD; undefined on a node that runs no speech engines (the route answers 501). */
  engines: { stt: SpeechToText | undefined; vad: VoiceActivityDetector } | undefined;
  charges: TranscriptionCharges;
  clock?: Clock;
}

/**
 * `POST /v2/transcriptions/sync`: one recording of at most a minute, transcribed in the request. The body is the
 * recording itself (`audio/wav`, or `audio/basic` for raw 8 kHz mu-law). The asynchronous jobs
 * (`POST /v2/transcriptions`, reads, lists, deletes) are not live yet.
 */
export function registerTranscriptionRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TranscriptionDeps,
): void {
  app.register(async (scoped) => {
    scoped.addContentTypeParser(
      [...RECORDING_MEDIA_TYPES],
      { parseAs: 'buffer', bodyLimit: SYNC_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    defineRoute(scoped, registry, {
      method: 'POST',
      url: '/transcriptions/sync',
      operationId: 'transcribeSync',
      summary:
        'Transcribe one recording (at most 60 s) in this request: speakers (one per channel), times, language per segment, cost',
      tag: 'Speech',
      query,
      streamedBody: {
        contentType: 'audio/wav',
        description:
          'The recording: WAV (16-bit PCM, 8-bit mu-law or A-law; one or two channels; up to 12 MB), or `audio/basic` (raw 8 kHz mu-law)',
      },
      responses: { 200: { description: 'The finished transcription', schema: transcriptionSchema } },
      errors: ['invalid_request', 'insufficient_balance', 'not_implemented', 'body_too_large'],
      handler: async ({ auth, query, request }) =>
        transcribeNow(deps, auth.workspaceId, query.language_code, recordingOf(request)),
    });
  });
}

function recordingOf(request: FastifyRequest): { bytes: Buffer; mediaType: string } {
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!(RECORDING_MEDIA_TYPES as readonly string[]).includes(mediaType) || !Buffer.isBuffer(request.body))
    throw new ApiError(
      'invalid_request',
      'body: send the recording itself as audio/wav (WAV) or audio/basic (raw 8 kHz mu-law); mp3 and ogg are not taken yet',
    );
  return { bytes: request.body, mediaType };
}

async function transcribeNow(
  deps: TranscriptionDeps,
  workspaceId: string,
  language: (typeof SPEECH_LANGUAGES)[number],
  recording: { bytes: Buffer; mediaType: string },
) {
  const engines = deps.engines;
  if (!engines?.stt)
    throw new ApiError('not_implemented', 'transcriptions need a speech engine on this node');
  const stt = engines.stt;
  let audio: ReturnType<typeof decodeRecording>;
  try {
    audio = decodeRecording(recording.bytes, recording.mediaType);
  } catch (error) {
    throw new ApiError('invalid_request', `body: ${(error as Error).message}`);
  }
  if (audio.channels.length > 2)
    throw new ApiError('invalid_request', `body: ${audio.channels.length} channels; one or two are taken`);
  const durationMs = recordingDurationMs(audio);
  if (durationMs > SYNC_MAX_SECONDS * 1000)
    throw new ApiError(
      'invalid_request',
      `body: ${Math.ceil(durationMs / 1000)} s of audio; the sync form takes ${SYNC_MAX_SECONDS} s`,
    );
  if (!transcribesLanguage(stt.languages, language))
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
  let segments: RecordingSegment[] = [];
  let failure: string | null = null;
  try {
    segments = await transcribeRecording(audio, { stt, vad: engines.vad }, language);
  } catch (error) {
    failure = `the speech engine failed: ${(error as Error).message}`;
  }
  const status = failure ? 'failed' : audio.channels.length === 2 ? 'completed' : 'degraded';
  const charged =
    cost > 0
      ? await deps.charges.settle(
          workspaceId,
          id,
          status === 'completed',
          `Transcription, ${seconds} s of audio`,
        )
      : 0;
  return {
    id,
    object: 'transcription' as const,
    status,
    language_code: language,
    duration_secs: Math.round(durationMs) / 1000,
    channels: audio.channels.length,
    segments: segments.map((s) => ({
      speaker: `speaker_${s.channel + 1}`,
      start_ms: Math.round(s.startMs),
      end_ms: Math.round(s.endMs),
      text: s.text,
      language: s.language,
    })),
    failure,
    cost_paise: charged,
    created_at: isoTime(clock.now()),
  };
}
