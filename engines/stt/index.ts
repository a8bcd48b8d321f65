/**
 * Speech to text: the interface, the providers (`openai`, `deepgram`, `sphinx`), the VAD adapter that makes batch
 * providers stream, and `createSpeechToText` for the composition root.
 */
import type { VoiceActivityDetector } from '../vad/types.ts';
import { DeepgramTranscriber, type DeepgramTranscriberOptions } from './providers/deepgram.ts';
import { OpenAiTranscriber, type OpenAiTranscriberOptions } from './providers/openai.ts';
import { SphinxTranscriber, type SphinxTranscriberOptions } from './providers/sphinx.ts';
import type { VadSegmentationOptions } from './stream-adapter.ts';
import type { SpeechToText } from './types.ts';

export { isEnglish, iso639_1, transcribesLanguage } from './language.ts';
export {
  DEEPGRAM_DEFAULTS,
  DeepgramStream,
  DeepgramTranscriber,
  type DeepgramTranscriberOptions,
} from './providers/deepgram.ts';
export {
  OPENAI_STT_DEFAULTS,
  OpenAiTranscriber,
  type OpenAiTranscriberOptions,
  transcriptionFailure,
} from './providers/openai.ts';
export {
  SPHINX_DEFAULTS,
  type SphinxDecoderKind,
  type SphinxLanguageModel,
  SphinxTranscriber,
  type SphinxTranscriberOptions,
} from './providers/sphinx.ts';
export {
  type BatchTranscriber,
  VAD_SEGMENTATION_DEFAULTS,
  type VadSegmentationOptions,
  VadSegmentedStream,
} from './stream-adapter.ts';
export type * from './types.ts';

/** One STT engine as configured: the provider and its own options. Batch providers need a VAD to stream. */
export type SpeechToTextConfig =
  | ({ provider: 'openai' } & Omit<OpenAiTranscriberOptions, 'vad'>)
  | ({ provider: 'deepgram' } & DeepgramTranscriberOptions)
  | ({ provider: 'sphinx' } & Omit<SphinxTranscriberOptions, 'vad'>);

export interface SpeechToTextDependencies {
  /** Segments audio for the batch providers (`openai`, `sphinx`); one shared detector (a model) is enough. */
  vad?: VoiceActivityDetector;
  segmentation?: VadSegmentationOptions;
}

/** Builds the configured engine. Throws when a batch provider gets no VAD, or sphinx is not installed. */
export function createSpeechToText(
  config: SpeechToTextConfig,
  deps: SpeechToTextDependencies = {},
): SpeechToText {
  switch (config.provider) {
    case 'deepgram': {
      const { provider: _, ...options } = config;
      return new DeepgramTranscriber(options);
    }
    case 'openai': {
      const { provider: _, ...options } = config;
      return new OpenAiTranscriber({ ...options, vad: requireVad(deps, 'openai'), ...segmentation(deps) });
    }
    case 'sphinx': {
      const { provider: _, ...options } = config;
      if (!SphinxTranscriber.available(options)) {
        throw new Error(
          'the sphinx STT needs PocketSphinx: apt-get install -y pocketsphinx-en-us libpocketsphinx-dev (then npm ci) or pocketsphinx',
        );
      }
      return new SphinxTranscriber({ ...options, vad: requireVad(deps, 'sphinx'), ...segmentation(deps) });
    }
  }
}

function requireVad(deps: SpeechToTextDependencies, provider: string): VoiceActivityDetector {
  if (!deps.vad)
    throw new Error(`the ${provider} STT transcribes utterances: give it a voice activity detector`);
  return deps.vad;
}

function segmentation(deps: SpeechToTextDependencies): { segmentation?: VadSegmentationOptions } {
  return deps.segmentation === undefined ? {} : { segmentation: deps.segmentation };
}
