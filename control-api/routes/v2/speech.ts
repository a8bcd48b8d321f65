import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import { ApiError } from '../../../core/errors.ts';
import { isId, newId } from '../../../core/ids.ts';
import { paiseToRupees } from '../../../core/money.ts';
import { speechCost } from '../../../core/speech/prices.ts';
import type { SpeechCharges } from '../../../core/speech/speech-charges.ts';
import type { SpeechRecord } from '../../../core/store/speech-types.ts';
import { SPEECH_RATES, SpeechEncoder, type SpeechFormat } from '../../../engines/tts/output-format.ts';
import type { VoiceRouter } from '../../../engines/tts/router.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { timestamp } from '../../schemas/common.ts';

export const MAX_SPEECH_CHARS = 5000;

const FORMATS = ['wav', 'pcm16', 'mulaw', 'mp3'] as const;
const RATES = SPEECH_RATES;
const DEFAULT_RATE: Record<SpeechFormat, number> = { wav: 16000, pcm16: 16000, mulaw: 8000, mp3: 16000 };

const speechBody = z
  .object({
    text: z.string().min(1).max(MAX_SPEECH_CHARS).describe('1-5,000 characters'),
    voice_id: z.string().min(1).max(64).describe('a voice of `GET /v2/voices`'),
    format: z.enum(FORMATS).default('wav'),
    sample_rate: z
      .number()
      .int()
      .optional()
      .describe(
        'wav, pcm16, mp3: 8000, 16000 (default), 24000 or 48000; mulaw: 8000 (default) or 16000. mp3 is mono at a constant bitrate for speech (24, 48, 64 or 96 kbps by rate)',
      ),
  })
  .strict();

const speechSchema = z.object({
  id: z.string(),
  object: z.literal('speech'),
  voice_id: z.string(),
  format: z.enum(FORMATS),
  sample_rate: z.number().int(),
  characters: z.number().int(),
  audio_seconds: z.number(),
  cost_paise: z.number().int(),
  cost_inr: z.number(),
  created_at: timestamp,
});

export interface SpeechRouteDeps {
  /** The voices; undefined on a node without TTS engines (the routes then answer 501). */
  speaker: VoiceRouter | undefined;
  charges: SpeechCharges;
  clock?: Clock;
}

type SpeechBody = z.output<typeof speechBody>;

/** `POST /v2/speech` (audio streamed as it is synthesised) and `GET /v2/speech/{id}` (its cost readback). */
export function registerSpeechRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: SpeechRouteDeps,
): void {
  const clock = deps.clock ?? systemClock;
  defineRoute(app, registry, {
    method: 'POST',
    url: '/speech',
    operationId: 'createSpeech',
    summary:
      'Text to speech: the audio, streamed (chunked) as it is synthesised, with header X-Speech-Id; charged per character when done',
    tag: 'Speech',
    body: speechBody,
    responses: {
      200: {
        description:
          'The audio: `audio/wav` (streamed: the header carries the streaming size 0xFFFFFFFF), `audio/L16` (PCM16 little-endian mono) or `audio/basic` (mu-law)',
        headers: { 'X-Speech-Id': 'sp_<ulid>: read the cost back with GET /v2/speech/{id}' },
      },
    },
    errors: ['invalid_request', 'insufficient_balance', 'not_implemented'],
    handler: async ({ auth, body, reply }) => {
      const request = await prepareSpeech(deps, clock, auth.workspaceId, body);
      return speak(deps, clock, request, reply);
    },
  });

  defineRoute(app, registry, {
    method: 'GET',
    url: '/speech/:id',
    operationId: 'getSpeech',
    summary: 'The cost readback of one text-to-speech request',
    tag: 'Speech',
    params: z.object({ id: z.string().max(64) }),
    responses: { 200: { description: 'The request', schema: speechSchema } },
    errors: ['not_found'],
    handler: async ({ auth, params }) => {
      const found = isId('speech', params.id)
        ? await deps.charges.get(auth.workspaceId, params.id)
        : undefined;
      if (!found) throw new ApiError('not_found', `no speech ${params.id}`);
      return speechObject(found);
    },
  });
}

interface PreparedSpeech {
  speaker: VoiceRouter;
  record: Omit<SpeechRecord, 'audioMs' | 'createdAt'>;
  text: string;
  language: string;
}

/** Checks the request and holds its price: a wallet that cannot cover it is refused before any synthesis. */
async function prepareSpeech(
  deps: SpeechRouteDeps,
  clock: Clock,
  workspaceId: string,
  body: SpeechBody,
): Promise<PreparedSpeech> {
  const speaker = deps.speaker;
  if (!speaker) throw new ApiError('not_implemented', 'text to speech is not configured on this node');
  const voice = speaker.catalogue.get(body.voice_id);
  if (!voice) throw new ApiError('invalid_request', `voice_id: unknown voice '${body.voice_id}'`);
  if (!speaker.available(voice.id))
    throw new ApiError('invalid_request', `voice_id: '${voice.id}' is not available on this deployment`);
  const rate = body.sample_rate ?? DEFAULT_RATE[body.format];
  if (!RATES[body.format].includes(rate))
    throw new ApiError(
      'invalid_request',
      `sample_rate: ${body.format} takes ${RATES[body.format].join(', ')}, not ${rate}`,
    );
  const characters = [...body.text].length;
  const costPaise = speechCost(voice.engine, characters);
  const id = newId('speech', clock.now());
  if (!(await deps.charges.reserve(workspaceId, id, costPaise)))
    throw new ApiError('insufficient_balance', `the wallet cannot cover this speech (${costPaise} paise)`);
  return {
    speaker,
    text: body.text,
    language: voice.language,
    record: {
      id,
      workspaceId,
      voiceId: voice.id,
      format: body.format,
      sampleRate: rate,
      characters,
      costPaise,
    },
  };
}

/** Synthesises a held request into the response, streamed; its first audio decides the answer. */
async function speak(
  deps: SpeechRouteDeps,
  clock: Clock,
  request: PreparedSpeech,
  reply: FastifyReply,
): Promise<Readable> {
  const { record } = request;
  const controller = new AbortController();
  const encoder = new SpeechEncoder(record.format as SpeechFormat, record.sampleRate);
  const chunks = request.speaker.synthesize({
    voiceId: record.voiceId,
    text: request.text,
    language: request.language,
    signal: controller.signal,
  });
  // An engine that fails before its first audio gives a clean error, and costs nothing.
  let first: IteratorResult<Int16Array>;
  try {
    first = await chunks.next();
  } catch (error) {
    await deps.charges.cancel(record.workspaceId, record.id);
    throw new ApiError('internal', `synthesis failed: ${(error as Error).message}`);
  }
  reply
    .header('content-type', encoder.contentType)
    .header('x-speech-id', record.id)
    .header('x-speech-cost-paise', String(record.costPaise));
  return Readable.from(
    streamAudio(first, chunks, encoder, {
      done: (audioMs) => deps.charges.complete({ ...record, audioMs, createdAt: clock.now() }),
      failed: () => {
        controller.abort();
        return deps.charges.cancel(record.workspaceId, record.id);
      },
    }),
    { objectMode: false },
  );
}

function speechObject(found: SpeechRecord) {
  return {
    id: found.id,
    object: 'speech' as const,
    voice_id: found.voiceId,
    format: found.format as SpeechFormat,
    sample_rate: found.sampleRate,
    characters: found.characters,
    audio_seconds: Math.round(found.audioMs) / 1000,
    cost_paise: found.costPaise,
    cost_inr: paiseToRupees(found.costPaise),
    created_at: isoTime(found.createdAt),
  };
}

/**
 * The response body: the encoded audio chunk by chunk. The charge is taken once the last audio is encoded and
 * before the body ends, so a client that read the whole body can read the cost back at once; a client that
 * leaves early, or an engine that fails midway, costs nothing.
 */
async function* streamAudio(
  first: IteratorResult<Int16Array>,
  chunks: AsyncGenerator<Int16Array>,
  encoder: SpeechEncoder,
  settle: { done: (audioMs: number) => Promise<void>; failed: () => Promise<void> },
): AsyncGenerator<Buffer> {
  let settled = false;
  try {
    yield encoder.header();
    let next = first;
    while (!next.done) {
      const bytes = encoder.encode(next.value);
      if (bytes.length > 0) yield bytes;
      next = await chunks.next();
    }
    const tail = encoder.flush();
    await settle.done(encoder.audioMs);
    settled = true;
    if (tail.length > 0) yield tail;
  } finally {
    if (!settled) await settle.failed().catch(() => {});
  }
}
