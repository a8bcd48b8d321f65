/**
 * Speech to text. Input is always canonical audio: PCM16 mono 16 kHz (`Int16Array`), usually 20 ms frames.
 * Streaming providers take frames as they come; batch providers (one request per utterance) are turned into
 * streaming ones by a VAD-driven adapter.
 */
export interface SttCapabilities {
  /** Accepts audio continuously and emits results as it goes. */
  streaming: boolean;
  /** Emits partial (interim) transcripts. */
  interimResults: boolean;
}

export interface TranscriptWord {
  word: string;
  startMs: number;
  endMs: number;
  confidence?: number;
}

export type SttEvent =
  | { type: 'speech_started'; atMs: number }
  | { type: 'partial'; text: string }
  /** A final segment; `endOfTurn` when the provider decided the speaker finished (e.g. Deepgram speech_final). */
  | {
      type: 'final';
      text: string;
      confidence?: number;
      words?: TranscriptWord[];
      endOfTurn: boolean;
      language?: string;
    }
  | { type: 'utterance_end'; atMs: number }
  | { type: 'error'; error: Error };

export interface SttStreamOptions {
  /** BCP-47, e.g. hi-IN. */
  language: string;
  signal?: AbortSignal;
}

export interface SttStream extends AsyncIterable<SttEvent> {
  /** Adds audio (PCM16 16 kHz mono). */
  push(frame: Int16Array): void;
  /** Asks for final results of everything pushed so far (end of the caller's turn). */
  flush(): void;
  /** No more audio; the iterator ends after the last results. */
  end(): Promise<void>;
}

export interface SpeechToText {
  readonly provider: string;
  readonly capabilities: SttCapabilities;
  /** Languages it can transcribe (BCP-47); empty means any. */
  readonly languages: readonly string[];
  stream(options: SttStreamOptions): SttStream;
  /** One utterance or recording, whole (PCM16 16 kHz). */
  transcribe(audio: Int16Array, options: SttStreamOptions): Promise<{ text: string; language?: string }>;
}
