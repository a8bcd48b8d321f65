/**
 * Speech to text through any OpenAI-compatible `POST /v1/audio/transcriptions` (OpenAI, whisper.cpp server,
 * faster-whisper servers, vLLM), with the official `openai` SDK. One request per utterance: the audio is uploaded
 * as a 16 kHz mono 16-bit WAV, with `language` as ISO-639-1 taken from the BCP-47 tag (none when the tag has no
 * two-letter code: the server detects it). Batch only (`capabilities.streaming` is false); `stream()` segments
 * the audio with the VAD given at construction (see stream-adapter.ts).
 *
 * Failures are `EngineError`s, retryable for 408, 429, 5xx, timeouts and connection failures. A retryable
 * failure is tried once more, at most, after a short pause: a caller is waiting for the turn, and a second
 * failure is better handed to the caller's fallback than retried again. Aborting the signal cancels the request
 * and rejects with a non-retryable `EngineError`.
 */
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  toFile,
} from 'openai';
import { CANONICAL_RATE, writeWav } from '../../../codecs/index.ts';
import { EngineError, isEngineError } from '../../errors.ts';
import type { VoiceActivityDetector } from '../../vad/types.ts';
import { iso639_1 } from '../language.ts';
import { type VadSegmentationOptions, VadSegmentedStream } from '../stream-adapter.ts';
import type { SpeechToText, SttCapabilities, SttStream, SttStreamOptions } from '../types.ts';

export const OPENAI_STT_ENGINE = 'stt:openai';

export interface OpenAiTranscriberOptions {
  /** API root including `/v1`; default `https://api.openai.com/v1`. */
  baseURL?: string;
  /** Empty or absent for local servers that take no key. */
  apiKey?: string;
  /** Default `whisper-1`; self-hosted servers name their own (`Systran/faster-whisper-small`, ...). */
  model?: string;
  /** Vocabulary or style hint sent with every request (names, product words). */
  prompt?: string;
  /** Per request attempt. */
  timeoutMs?: number;
  /** Pause before the one retry. */
  retryDelayMs?: number;
  /** Segments audio for `stream()`; without one, `stream()` throws. */
  vad?: VoiceActivityDetector;
  segmentation?: VadSegmentationOptions;
  /** Replaces the global `fetch` (a proxy agent, instrumentation). */
  fetch?: typeof fetch;
}

export const OPENAI_STT_DEFAULTS = {
  baseURL: 'https://api.openai.com/v1',
  model: 'whisper-1',
  // Hosted Whisper answers a few seconds of speech in 0.3-1.5 s, a local CPU server in 1-5 s. A caller who has
  // waited 10 s after speaking has given up on this turn; the retry or the caller's fallback serves them better.
  timeoutMs: 10_000,
  // Long enough for a load balancer to pick another backend or a rate limit window to move on, short enough
  // that the retry still lands while the caller waits.
  retryDelayMs: 250,
} as const;

/** Sent when no key is configured: the SDK insists on one and local servers ignore it. */
const PLACEHOLDER_API_KEY = 'no-key';

export class OpenAiTranscriber implements SpeechToText {
  readonly provider = 'openai';
  readonly capabilities: SttCapabilities = { streaming: false, interimResults: false };
  readonly languages: readonly string[] = [];
  readonly model: string;
  readonly #client: OpenAI;
  readonly #prompt: string | undefined;
  readonly #timeoutMs: number;
  readonly #retryDelayMs: number;
  readonly #vad: VoiceActivityDetector | undefined;
  readonly #segmentation: VadSegmentationOptions;

  constructor(options: OpenAiTranscriberOptions = {}) {
    const d = OPENAI_STT_DEFAULTS;
    this.model = options.model ?? d.model;
    this.#prompt = options.prompt;
    this.#timeoutMs = options.timeoutMs ?? d.timeoutMs;
    this.#retryDelayMs = options.retryDelayMs ?? d.retryDelayMs;
    this.#vad = options.vad;
    this.#segmentation = options.segmentation ?? {};
    // Every option the SDK would otherwise read from process.env is given explicitly.
    this.#client = new OpenAI({
      baseURL: options.baseURL ?? d.baseURL,
      apiKey: options.apiKey ? options.apiKey : PLACEHOLDER_API_KEY,
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      logLevel: 'off',
      maxRetries: 0,
      timeout: this.#timeoutMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  stream(options: SttStreamOptions): SttStream {
    if (!this.#vad) {
      throw new EngineError('the openai transcriber needs a voice activity detector to stream', {
        engine: OPENAI_STT_ENGINE,
        retryable: false,
      });
    }
    return new VadSegmentedStream(this, this.#vad, { ...this.#segmentation, ...options });
  }

  async transcribe(
    audio: Int16Array,
    options: SttStreamOptions,
  ): Promise<{ text: string; language?: string }> {
    if (audio.length === 0) return { text: '' };
    const wav = writeWav({ sampleRate: CANONICAL_RATE, channels: [audio] });
    const language = iso639_1(options.language);
    try {
      return await this.#attempt(wav, language, options.signal);
    } catch (error) {
      if (!isEngineError(error) || !error.retryable || options.signal?.aborted) throw error;
      await pause(this.#retryDelayMs, options.signal);
      return await this.#attempt(wav, language, options.signal);
    }
  }

  async #attempt(
    wav: Buffer,
    language: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ text: string; language?: string }> {
    try {
      const result = await this.#client.audio.transcriptions.create(
        {
          file: await toFile(wav, 'utterance.wav', { type: 'audio/wav' }),
          model: this.model,
          response_format: 'json',
          ...(language === undefined ? {} : { language }),
          ...(this.#prompt === undefined ? {} : { prompt: this.#prompt }),
        },
        { ...(signal === undefined ? {} : { signal }), maxRetries: 0, timeout: this.#timeoutMs },
      );
      if (typeof result.text !== 'string') {
        throw new EngineError('transcription server answered without text', {
          engine: OPENAI_STT_ENGINE,
          retryable: false,
        });
      }
      return { text: result.text };
    } catch (error) {
      throw transcriptionFailure(error, signal);
    }
  }
}

/** Statuses a later attempt may cure: request timeout, rate limit, and every server-side failure. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Classifies what the SDK threw. */
export function transcriptionFailure(error: unknown, signal?: AbortSignal): EngineError {
  const engine = OPENAI_STT_ENGINE;
  if (isEngineError(error)) return error;
  if (signal?.aborted || error instanceof APIUserAbortError) {
    return new EngineError('transcription aborted', { engine, retryable: false, cause: error });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new EngineError('transcription request timed out', { engine, retryable: true, cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new EngineError(`cannot reach the transcription server: ${error.message}`, {
      engine,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError && error.status !== undefined) {
    const { status } = error;
    return new EngineError(`transcription server answered ${status}: ${error.message}`, {
      engine,
      retryable: isRetryableStatus(status),
      status,
      cause: error,
    });
  }
  return new EngineError(`transcription failed: ${String(error)}`, {
    engine,
    retryable: false,
    cause: error,
  });
}

/** Waits `ms`, or less when `signal` aborts (the caller then sees the abort from the next attempt). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
