/**
 * Voice activity: the probability that a frame is speech, per call. A detector is shared (one model);
 * each call gets its own stream with its own state.
 */
export interface VadStream {
  /**
   * PCM16 16 kHz; any length. Resolves to one probability (0..1) per analysis window completed by this audio,
   * in order. Asynchronous because model inference is: a detector may batch the windows of many streams into
   * one inference run. Pushes may overlap (no need to await one before the next); results still come in order
   * (each push's promise settles after those of the pushes before it). The frame is read before `push` returns:
   * the caller may reuse its buffer. The array resolved may be shared and frozen: read it, do not change it.
   */
  push(frame: Int16Array): Promise<number[]>;
  /** Forget the audio so far (a new utterance or call); windows already pushed still resolve. */
  reset(): void;
}

export interface VoiceActivityDetector {
  readonly name: string;
  /** Samples per analysis window at 16 kHz (Silero: 512 = 32 ms). */
  readonly windowSamples: number;
  createStream(): VadStream;
}

/** Speech segmentation on top of probabilities, with hysteresis (upstream Silero defaults). */
export interface VadThresholds {
  /** Probability at or above which a window is speech. */
  activation: number;
  /** Probability below which a window is silence (hysteresis). */
  deactivation: number;
  /** Speech must last this long to start a segment. */
  minSpeechMs: number;
  /** Silence must last this long to end a segment. */
  minSilenceMs: number;
}

export const DEFAULT_VAD_THRESHOLDS: VadThresholds = {
  activation: 0.5,
  deactivation: 0.35,
  minSpeechMs: 250,
  minSilenceMs: 100,
};
