/**
 * Voice activity: the probability that a frame is speech, per call. A detector is shared (one model);
 * each call gets its own stream with its own state.
 */
export interface VadStream {
  /** PCM16 16 kHz; any length. Returns one probability (0..1) per analysis window completed by this audio. */
  push(frame: Int16Array): number[];
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
