import { DEFAULT_VAD_THRESHOLDS, type VadThresholds, type VoiceActivityDetector } from './types.ts';

/**
 * Turns per-window speech probabilities into speech segments, streaming, with the hysteresis of upstream
 * Silero's `get_speech_timestamps`:
 * - a segment opens at the first window at or above `activation`;
 * - once open, windows at or above `deactivation` keep it going, and only a window at or above `activation`
 *   cancels a silence in progress;
 * - it closes when silence (windows below `deactivation`, counted from the first of them) has lasted
 *   `minSilenceMs`; the segment's end is where that silence began;
 * - it is reported only once it has lasted `minSpeechMs` with no silence in progress (shorter bursts, such as
 *   a click or a cough, never produce events).
 *
 * Times are ms of audio from the first window pushed (window n covers [n * windowMs, (n + 1) * windowMs)).
 * Each event says when the thing happened (`atMs`) and when the segmenter could tell (`decidedAtMs`, the end
 * of the window that decided it): consumers that wait on silence count from `atMs`.
 */
export type SegmentEvent =
  | { type: 'speech_start'; atMs: number; decidedAtMs: number }
  | { type: 'speech_end'; atMs: number; startMs: number; decidedAtMs: number };

type Phase =
  /** No speech. */
  | { kind: 'idle' }
  /** Speech seen, not long enough yet to be reported. */
  | { kind: 'candidate'; startMs: number; silenceStartMs: number | null }
  /** A reported segment. */
  | { kind: 'speech'; startMs: number; silenceStartMs: number | null };

const MS_PER_SAMPLE_AT_16K = 1 / 16;

export class SpeechSegmenter {
  readonly windowMs: number;
  readonly thresholds: Readonly<VadThresholds>;
  #windows = 0;
  #phase: Phase = { kind: 'idle' };

  constructor(windowMs: number, thresholds: VadThresholds = DEFAULT_VAD_THRESHOLDS) {
    if (!(windowMs > 0)) throw new RangeError('windowMs must be positive');
    if (!(thresholds.deactivation <= thresholds.activation)) {
      throw new RangeError('deactivation must not exceed activation');
    }
    this.windowMs = windowMs;
    this.thresholds = Object.freeze({ ...thresholds });
  }

  /** A segmenter for a detector's windows (16 kHz audio). */
  static for(detector: VoiceActivityDetector, thresholds?: VadThresholds): SpeechSegmenter {
    return new SpeechSegmenter(detector.windowSamples * MS_PER_SAMPLE_AT_16K, thresholds);
  }

  /** Audio time consumed so far, in ms. */
  get positionMs(): number {
    return this.#windows * this.windowMs;
  }

  /** Where the silence in progress inside a reported segment began (ms), or null while it is voiced. */
  get silenceStartMs(): number | null {
    return this.#phase.kind === 'speech' ? this.#phase.silenceStartMs : null;
  }

  /** Whether a reported segment is open (speech_start sent, speech_end not yet). */
  get speaking(): boolean {
    return this.#phase.kind === 'speech';
  }

  /** The next window's probability; at most one event per window. */
  push(probability: number): SegmentEvent | null {
    const { activation, deactivation, minSpeechMs, minSilenceMs } = this.thresholds;
    const startMs = this.#windows * this.windowMs;
    this.#windows++;
    const endMs = this.#windows * this.windowMs;
    const phase = this.#phase;

    if (phase.kind === 'idle') {
      if (probability < activation) return null;
      this.#phase = { kind: 'candidate', startMs, silenceStartMs: null };
      return this.#confirmIfLongEnough(endMs, minSpeechMs);
    }

    if (probability >= activation) phase.silenceStartMs = null;
    else if (probability < deactivation && phase.silenceStartMs === null) phase.silenceStartMs = startMs;

    const silenceStart = phase.silenceStartMs;
    if (silenceStart !== null && probability < deactivation && endMs - silenceStart >= minSilenceMs) {
      this.#phase = { kind: 'idle' };
      if (phase.kind === 'candidate') return null;
      return { type: 'speech_end', atMs: silenceStart, startMs: phase.startMs, decidedAtMs: endMs };
    }
    if (phase.kind === 'candidate') return this.#confirmIfLongEnough(endMs, minSpeechMs);
    return null;
  }

  /** Several windows at once; the events in order. */
  pushAll(probabilities: Iterable<number>): SegmentEvent[] {
    const events: SegmentEvent[] = [];
    for (const p of probabilities) {
      const event = this.push(p);
      if (event) events.push(event);
    }
    return events;
  }

  /** End of audio: closes a reported segment (at its silence start if one is in progress, else now). */
  finish(): SegmentEvent | null {
    const phase = this.#phase;
    this.#phase = { kind: 'idle' };
    if (phase.kind !== 'speech') return null;
    const atMs = phase.silenceStartMs ?? this.positionMs;
    return { type: 'speech_end', atMs, startMs: phase.startMs, decidedAtMs: this.positionMs };
  }

  /** Start over at time 0. */
  reset(): void {
    this.#windows = 0;
    this.#phase = { kind: 'idle' };
  }

  #confirmIfLongEnough(endMs: number, minSpeechMs: number): SegmentEvent | null {
    const phase = this.#phase;
    if (phase.kind !== 'candidate' || phase.silenceStartMs !== null) return null;
    if (endMs - phase.startMs < minSpeechMs) return null;
    this.#phase = { kind: 'speech', startMs: phase.startMs, silenceStartMs: null };
    return { type: 'speech_start', atMs: phase.startMs, decidedAtMs: endMs };
  }
}
