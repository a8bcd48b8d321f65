/**
 * Voice routing: an agent names a catalogue voice (`local-hi-female`, `openai-alloy`, ...); the router finds its
 * engine (`espeak` or `openai`) and speaks with the engine's own voice name (`hi+f3`, `alloy`).
 */
import { EngineError } from '../errors.ts';
import type { Voice, VoiceCatalogue } from './catalogue.ts';
import type { TextToSpeech } from './types.ts';

export type TtsEngineName = Voice['engine'];

export interface VoiceSynthesisRequest {
  /** Catalogue voice id. */
  voiceId: string;
  text: string;
  /** BCP-47; one of the voice's languages, else the voice's main language is used. */
  language?: string;
  /** 0.5 - 2.0, default 1. */
  speed?: number;
  signal?: AbortSignal;
}

export interface ResolvedVoice {
  voice: Voice;
  engine: TextToSpeech;
}

export class VoiceRouter {
  readonly catalogue: VoiceCatalogue;
  readonly #engines: Partial<Record<TtsEngineName, TextToSpeech>>;
  readonly #onClose: () => Promise<void>;

  constructor(
    catalogue: VoiceCatalogue,
    engines: Partial<Record<TtsEngineName, TextToSpeech>>,
    onClose: () => Promise<void> = async () => {},
  ) {
    this.catalogue = catalogue;
    this.#engines = engines;
    this.#onClose = onClose;
  }

  /** The engine configured for a kind, if any. */
  engine(name: TtsEngineName): TextToSpeech | undefined {
    return this.#engines[name];
  }

  /** Whether a voice id exists and its engine is configured. */
  available(voiceId: string): boolean {
    const voice = this.catalogue.get(voiceId);
    return voice !== undefined && this.#engines[voice.engine] !== undefined;
  }

  /** The voice and its engine; a non-retryable EngineError for an unknown voice or an unconfigured engine. */
  resolve(voiceId: string): ResolvedVoice {
    const voice = this.catalogue.get(voiceId);
    if (!voice) throw new EngineError(`unknown voice '${voiceId}'`, { engine: 'router', retryable: false });
    const engine = this.#engines[voice.engine];
    if (!engine) {
      throw new EngineError(
        `voice '${voiceId}' needs the '${voice.engine}' TTS engine, which is not configured`,
        {
          engine: voice.engine,
          retryable: false,
        },
      );
    }
    return { voice, engine };
  }

  /**
   * Speaks with a catalogue voice: PCM16 mono 16 kHz chunks, as `TextToSpeech.synthesize` (errors, including an
   * unknown voice, surface when iterating).
   */
  async *synthesize(request: VoiceSynthesisRequest): AsyncGenerator<Int16Array> {
    const { voice, engine } = this.resolve(request.voiceId);
    const language =
      request.language !== undefined && voice.languages.includes(request.language)
        ? request.language
        : voice.language;
    yield* engine.synthesize({
      text: request.text,
      voice: voice.engine_voice,
      language,
      ...(request.speed !== undefined ? { speed: request.speed } : {}),
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
    });
  }

  /** Releases the engines the router was built with (the eSpeak thread). */
  close(): Promise<void> {
    return this.#onClose();
  }
}
