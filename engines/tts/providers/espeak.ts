/**
 * Local text to speech with eSpeak NG (WASM, `@echogarden/espeak-ng-emscripten`): every language of the catalogue,
 * no network, no system package. Robotic but instant and free: the sandbox, tests and offline deployments.
 *
 * The text is cut into sentences, each one a job on the shared `EspeakRuntime` (a worker thread, so synthesis
 * never blocks the event loop); audio streams out as eSpeak makes it, resampled 22050 -> 16000 Hz by one
 * `Resampler` across the whole text, in 100 ms chunks. The first chunk is ready after the first ~100 ms of the
 * first sentence is synthesized, typically a few milliseconds of CPU.
 */
import { CANONICAL_RATE, Resampler } from '../../../codecs/index.ts';
import { EngineError, isEngineError } from '../../errors.ts';
import { PcmChunker } from '../audio.ts';
import { splitSentences } from '../sentences.ts';
import type { SynthesisRequest, TextToSpeech, TtsCapabilities } from '../types.ts';
import { ESPEAK_DEFAULT_WPM, ESPEAK_RATE } from './espeak-protocol.ts';
import { EspeakRuntime } from './espeak-runtime.ts';

export { ESPEAK_DEFAULT_WPM };

export interface EspeakSynthesizerOptions {
  /** The runtime to share (one per process is enough); by default the synthesizer makes and owns its own. */
  runtime?: EspeakRuntime;
  /** Longest piece of text given to eSpeak as one job. Default 400 characters (about 25 s of speech). */
  maxJobChars?: number;
}

/** eSpeak's accepted range of rates, words per minute. */
const MIN_WPM = 80;
const MAX_WPM = 450;

/** Maps a speed factor (0.5-2, 1 = normal) to eSpeak words per minute, clamped to what eSpeak accepts. */
export function espeakRate(speed = 1): number {
  if (!Number.isFinite(speed) || speed <= 0) {
    throw new EngineError(`speed must be a positive number, got ${speed}`, {
      engine: 'espeak',
      retryable: false,
    });
  }
  return Math.min(MAX_WPM, Math.max(MIN_WPM, Math.round(ESPEAK_DEFAULT_WPM * speed)));
}

export class EspeakSynthesizer implements TextToSpeech {
  readonly provider = 'espeak';
  readonly capabilities: TtsCapabilities = { streaming: true };
  readonly runtime: EspeakRuntime;
  readonly #ownsRuntime: boolean;
  readonly #maxJobChars: number;

  constructor(options: EspeakSynthesizerOptions = {}) {
    this.runtime = options.runtime ?? new EspeakRuntime();
    this.#ownsRuntime = options.runtime === undefined;
    this.#maxJobChars = options.maxJobChars ?? 400;
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<Int16Array> {
    const { signal } = request;
    const text = request.text.trim();
    if (text === '' || signal?.aborted) return;
    const rate = espeakRate(request.speed);
    // A request without a voice speaks its language's default voice (`hi-IN` -> `hi`).
    const voice = request.voice.trim() || request.language.split('-')[0]!;
    const sentences = splitSentences(text, {
      clauseMinChars: 0,
      firstClauseMinChars: 0,
      maxChars: this.#maxJobChars,
    });
    const resampler = new Resampler(ESPEAK_RATE, CANONICAL_RATE);
    const chunker = new PcmChunker();
    let delivered = false;
    try {
      for (const sentence of sentences) {
        for await (const block of this.runtime.speak(sentence, voice, rate, signal)) {
          for (const chunk of chunker.push(resampler.process(block))) {
            if (signal?.aborted) return;
            delivered = true;
            yield chunk;
          }
        }
        if (signal?.aborted) return;
      }
    } catch (error) {
      if (signal?.aborted) return;
      // Once audio has gone out, a retry would repeat it: the failure is no longer retryable.
      if (delivered && isEngineError(error) && error.retryable) {
        throw new EngineError(error.message, { engine: 'espeak', retryable: false, cause: error });
      }
      throw error;
    }
    for (const chunk of [...chunker.push(resampler.flush()), ...chunker.flush()]) {
      if (signal?.aborted) return;
      yield chunk;
    }
  }

  /** Stops the runtime if this synthesizer made it; a shared runtime is closed by its owner. */
  async close(): Promise<void> {
    if (this.#ownsRuntime) await this.runtime.close();
  }
}
