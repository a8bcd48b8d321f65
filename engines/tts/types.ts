/**
 * Text to speech. Output is always canonical audio: PCM16 mono 16 kHz chunks, streamed as they are made, so the
 * first audio can play before the sentence is finished.
 */
export interface TtsCapabilities {
  /** Audio arrives in chunks before synthesis finishes. */
  streaming: boolean;
}

export interface SynthesisRequest {
  text: string;
  /** The engine's own voice name (catalogue `engine_voice`). */
  voice: string;
  language: string;
  /** 0.5 - 2.0, default 1. */
  speed?: number;
  signal?: AbortSignal;
}

export interface TextToSpeech {
  readonly provider: string;
  readonly capabilities: TtsCapabilities;
  /** PCM16 16 kHz mono chunks. Throws EngineError on failure before the first chunk; aborting stops it. */
  synthesize(request: SynthesisRequest): AsyncIterable<Int16Array>;
}
