/**
 * Text to speech: the interface, the voice catalogue, the providers (local eSpeak NG, OpenAI-compatible speech),
 * the streaming sentence splitter that feeds them LLM text, and the router from catalogue voices to engines.
 */
import { VoiceCatalogue } from './catalogue.ts';
import { EspeakSynthesizer } from './providers/espeak.ts';
import { EspeakRuntime } from './providers/espeak-runtime.ts';
import { OpenAiSynthesizer, type OpenAiSynthesizerOptions } from './providers/openai.ts';
import { type TtsEngineName, VoiceRouter } from './router.ts';
import type { TextToSpeech } from './types.ts';

export { CHUNK_MS } from './audio.ts';
export { type Voice, VoiceCatalogue } from './catalogue.ts';
export {
  ESPEAK_DEFAULT_WPM,
  EspeakSynthesizer,
  type EspeakSynthesizerOptions,
  espeakRate,
} from './providers/espeak.ts';
export { EspeakRuntime } from './providers/espeak-runtime.ts';
export { MAX_INPUT_CHARS, OpenAiSynthesizer, type OpenAiSynthesizerOptions } from './providers/openai.ts';
export {
  type ResolvedVoice,
  type TtsEngineName,
  VoiceRouter,
  type VoiceSynthesisRequest,
} from './router.ts';
export {
  packSentences,
  SentenceSplitter,
  type SentenceSplitterOptions,
  splitSentences,
} from './sentences.ts';
export type { SynthesisRequest, TextToSpeech, TtsCapabilities } from './types.ts';

export interface TextToSpeechConfig {
  /** Default: `voices.json` beside the catalogue. */
  catalogue?: VoiceCatalogue;
  /** Local eSpeak NG; on unless false. */
  /**
   * Local eSpeak NG; on unless false. `warmup`: start its thread now and load every catalogue language it speaks,
   * so no caller waits for a first load (failures then surface on the first synthesis).
   */
  espeak?: boolean | { maxJobChars?: number; warmup?: boolean };
  /** OpenAI-compatible speech; without it the catalogue's `openai` voices are unavailable. */
  openai?: OpenAiSynthesizerOptions;
}

/**
 * Builds the configured engines and the router over them. The eSpeak thread starts on first use, or at once with
 * `espeak: { warmup: true }`. Close the router to stop it.
 */
export function createTextToSpeech(config: TextToSpeechConfig = {}): VoiceRouter {
  const catalogue = config.catalogue ?? VoiceCatalogue.load();
  const engines: Partial<Record<TtsEngineName, TextToSpeech>> = {};
  let runtime: EspeakRuntime | undefined;
  if (config.espeak !== false) {
    const options = typeof config.espeak === 'object' ? config.espeak : {};
    runtime = new EspeakRuntime();
    engines.espeak = new EspeakSynthesizer({
      runtime,
      ...(options.maxJobChars !== undefined ? { maxJobChars: options.maxJobChars } : {}),
    });
    if (options.warmup) {
      const voices = [
        ...new Set(catalogue.voices.filter((v) => v.engine === 'espeak').map((v) => v.engine_voice)),
      ];
      runtime.warmup(voices).catch(() => {});
    }
  }
  if (config.openai) engines.openai = new OpenAiSynthesizer(config.openai);
  return new VoiceRouter(catalogue, engines, async () => runtime?.close());
}
