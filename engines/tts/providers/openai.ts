/**
 * Text to speech through any OpenAI-compatible `POST /v1/audio/speech` (OpenAI, and self-hosted servers that
 * speak it), with the official `openai` SDK. We ask for `pcm` (raw 24 kHz 16-bit little-endian mono) and stream
 * the body as it arrives: each read is resampled 24 -> 16 kHz by one `Resampler` across the whole text (a read
 * may end in the middle of a sample: the odd byte waits for the next read) and yielded in 100 ms chunks.
 *
 * `input` is limited to 4096 characters: longer text is packed into pieces at sentence boundaries and spoken by
 * sequential requests into the same stream. Failures are EngineErrors: retryable for 408, 429, 5xx, timeouts and
 * connection failures, but only before the first chunk (after it, a retry would repeat audio already played).
 * The SDK's own retries are off by default: a live call's fallback policy belongs to the caller.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { CANONICAL_RATE, Resampler } from '../../../codecs/index.ts';
import { EngineError, isEngineError } from '../../errors.ts';
import { Pcm16ByteStream, PcmChunker } from '../audio.ts';
import { packSentences } from '../sentences.ts';
import type { SynthesisRequest, TextToSpeech, TtsCapabilities } from '../types.ts';

/** The `pcm` response format's rate. */
const PCM_RATE = 24_000;
/** The endpoint's `input` limit, in characters. */
export const MAX_INPUT_CHARS = 4096;
/** The endpoint's accepted `speed` range. */
const MIN_SPEED = 0.25;
const MAX_SPEED = 4;

/**
 * Wait for the response headers (the server's time to first audio). Hosted TTS answers in 0.2-1 s; a voice turn
 * that has waited 10 s is lost anyway, and the caller should fail over to another voice or engine.
 */
const FIRST_BYTE_TIMEOUT_MS = 10_000;
/**
 * Longest silence between two reads of a body. Servers send faster than real time, so a gap this long means a
 * stalled stream; without it a half-open connection would hold the turn forever.
 */
const IDLE_READ_TIMEOUT_MS = 10_000;

export interface OpenAiSynthesizerOptions {
  /** API root including `/v1`. Default `https://api.openai.com/v1`. */
  baseURL?: string;
  apiKey: string;
  /** Default `gpt-4o-mini-tts`. */
  model?: string;
  /** Style instructions, for the models that take them (`gpt-4o-mini-tts`). */
  instructions?: string;
  firstByteTimeoutMs?: number;
  idleReadTimeoutMs?: number;
  /** Retries inside the SDK, before any audio. Default 0. */
  maxRetries?: number;
  /** A ready client (custom fetch, proxies); the options above except the timeouts are then ignored. */
  client?: OpenAI;
}

export class OpenAiSynthesizer implements TextToSpeech {
  readonly provider = 'openai';
  readonly capabilities: TtsCapabilities = { streaming: true };
  readonly model: string;
  readonly #client: OpenAI;
  readonly #instructions: string | undefined;
  readonly #firstByteTimeoutMs: number;
  readonly #idleReadTimeoutMs: number;
  readonly #maxRetries: number;

  constructor(options: OpenAiSynthesizerOptions) {
    this.model = options.model ?? 'gpt-4o-mini-tts';
    this.#instructions = options.instructions;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? FIRST_BYTE_TIMEOUT_MS;
    this.#idleReadTimeoutMs = options.idleReadTimeoutMs ?? IDLE_READ_TIMEOUT_MS;
    this.#maxRetries = options.maxRetries ?? 0;
    this.#client =
      options.client ??
      new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL ?? 'https://api.openai.com/v1' });
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<Int16Array> {
    const { signal, speed } = request;
    const text = request.text.trim();
    if (text === '' || signal?.aborted) return;
    const voice = request.voice.trim();
    if (voice === '') throw refused('a voice is required');
    if (speed !== undefined && !(speed >= MIN_SPEED && speed <= MAX_SPEED)) {
      throw refused(`speed must be within ${MIN_SPEED}-${MAX_SPEED}, got ${speed}`);
    }
    const resampler = new Resampler(PCM_RATE, CANONICAL_RATE);
    const chunker = new PcmChunker();
    let delivered = false;
    for (const input of packSentences(text, MAX_INPUT_CHARS)) {
      const bytes = new Pcm16ByteStream();
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      try {
        const response = await this.#client.audio.speech.create(
          {
            model: this.model,
            voice,
            input,
            response_format: 'pcm',
            ...(speed !== undefined ? { speed } : {}),
            ...(this.#instructions !== undefined ? { instructions: this.#instructions } : {}),
          },
          { signal, timeout: this.#firstByteTimeoutMs, maxRetries: this.#maxRetries },
        );
        if (!response.body)
          throw new EngineError('speech response has no body', { engine: 'openai', retryable: true });
        reader = response.body.getReader();
        for (;;) {
          const { done, value } = await readWithin(reader, this.#idleReadTimeoutMs);
          if (done) break;
          for (const chunk of chunker.push(resampler.process(bytes.push(value)))) {
            if (signal?.aborted) return;
            delivered = true;
            yield chunk;
          }
        }
      } catch (error) {
        if (signal?.aborted) return;
        throw engineError(error, delivered);
      } finally {
        // Leaving early (abort, error, or a consumer that stopped) must release the connection.
        reader?.cancel().catch(() => {});
      }
    }
    for (const chunk of [...chunker.push(resampler.flush()), ...chunker.flush()]) {
      if (signal?.aborted) return;
      yield chunk;
    }
  }
}

function refused(message: string): EngineError {
  return new EngineError(message, { engine: 'openai', retryable: false });
}

/** The next read, or a retryable EngineError when nothing arrives within `ms`. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new EngineError(`speech stream stalled for ${ms} ms`, { engine: 'openai', retryable: true })),
      ms,
    );
  });
  try {
    return await Promise.race([reader.read(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/** Maps any failure to an EngineError; nothing is retryable once audio has been delivered. */
export function engineError(error: unknown, delivered: boolean): EngineError {
  if (isEngineError(error)) {
    if (!delivered || !error.retryable) return error;
    return new EngineError(error.message, { engine: 'openai', retryable: false, cause: error });
  }
  if (error instanceof APIConnectionError) {
    // Includes timeouts (APIConnectionTimeoutError) and refused or reset connections.
    return new EngineError(`speech request failed: ${error.message}`, {
      engine: 'openai',
      retryable: !delivered,
      cause: error,
    });
  }
  if (error instanceof APIError && error.status !== undefined) {
    const status = error.status;
    const transient = status === 408 || status === 429 || status >= 500;
    return new EngineError(`speech request failed with ${status}: ${error.message}`, {
      engine: 'openai',
      retryable: transient && !delivered,
      status,
      cause: error,
    });
  }
  // A body cut mid-stream surfaces as a plain error from the reader ("terminated").
  const message = error instanceof Error ? error.message : String(error);
  return new EngineError(`speech stream failed: ${message}`, {
    engine: 'openai',
    retryable: !delivered,
    cause: error,
  });
}
