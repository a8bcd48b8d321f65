import { measureLevel } from '../../../codecs/pcm16.ts';
import type { VadStream, VoiceActivityDetector } from '../types.ts';

/**
 * Energy-based voice activity: the fallback when the Silero model cannot load, and a cheap reference for tests.
 * Deterministic: the same audio always gives the same probabilities.
 *
 * Per 20 ms window: the RMS level in dBFS, compared with an adaptive noise floor. The floor is the quietest
 * window of the last ~2 s (minimum statistics over blocks): speech always has pauses between words inside
 * that span, so the floor follows the background and not the talker, and a new steady background (a fan, a
 * car) is learnt within that time. The probability is a logistic of the level above the floor, gated by an
 * absolute level below which nothing counts as speech.
 *
 * It cannot tell speech from other loud sound: steady noise that starts suddenly reads as speech until the
 * floor has learnt it. Prefer Silero whenever it is available.
 */

/** One canonical 20 ms frame: every frame pushed gives exactly one probability, with no buffering delay. */
export const ENERGY_WINDOW_SAMPLES = 320;
/**
 * Assumed floor before any audio: a fairly noisy phone line, so that such a line does not read as speech while
 * the floor is learnt; speech (-35..-15 dBFS) still stands 15 dB and more above it.
 */
const INITIAL_NOISE_FLOOR_DBFS = -50;
/** The floor is never taken below this: after digital silence (-120 dBFS) any dither would look like speech. */
const NOISE_FLOOR_MIN_DBFS = -70;
/** Minimum-statistics blocks: the floor is the quietest window of the current block and the previous ones. */
const FLOOR_BLOCK_WINDOWS = 25; // 25 x 20 ms = 500 ms
/** Previous blocks kept: with the current one, the floor looks back 1.5-2 s (see above). */
const FLOOR_BLOCKS = 3;
/** Level above the floor at which the probability is 0.5: ~10 dB separates voiced speech from room noise. */
const SNR_MIDPOINT_DB = 10;
/** Logistic slope: the probability goes from 0.12 to 0.88 over +-2 slopes (+-5 dB) around the midpoint. */
const SNR_SLOPE_DB = 2.5;
/** Absolute gate: below ~-50 dBFS a phone caller is not talking to us, whatever the floor. */
const SPEECH_MIN_DBFS = -50;
const SPEECH_MIN_SLOPE_DB = 2;

export class EnergyVad implements VoiceActivityDetector {
  readonly name = 'energy';
  readonly windowSamples = ENERGY_WINDOW_SAMPLES;

  createStream(): EnergyVadStream {
    return new EnergyVadStream();
  }
}

export class EnergyVadStream implements VadStream {
  readonly #window = new Int16Array(ENERGY_WINDOW_SAMPLES);
  #filled = 0;
  /** Quietest window of each previous block, newest last. */
  readonly #blockMinima: number[] = [];
  #currentBlockMin = INITIAL_NOISE_FLOOR_DBFS;
  #windowsInBlock = 0;
  #lastLevel = Number.NEGATIVE_INFINITY;

  push(frame: Int16Array): Promise<number[]> {
    return Promise.resolve(this.analyse(frame));
  }

  /** As `push`, synchronously: this detector needs no inference. */
  analyse(frame: Int16Array): number[] {
    const probabilities: number[] = [];
    let at = 0;
    while (at < frame.length) {
      const take = Math.min(frame.length - at, ENERGY_WINDOW_SAMPLES - this.#filled);
      this.#window.set(frame.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
      if (this.#filled === ENERGY_WINDOW_SAMPLES) {
        this.#filled = 0;
        probabilities.push(this.#analyseWindow(this.#window));
      }
    }
    return probabilities;
  }

  /** The current noise floor estimate, dBFS. */
  get noiseFloorDbfs(): number {
    let floor = this.#currentBlockMin;
    for (const m of this.#blockMinima) floor = Math.min(floor, m);
    return Math.max(NOISE_FLOOR_MIN_DBFS, floor);
  }

  /** Level of the last complete window, dBFS. */
  get levelDbfs(): number {
    return this.#lastLevel;
  }

  reset(): void {
    this.#filled = 0;
    this.#blockMinima.length = 0;
    this.#currentBlockMin = INITIAL_NOISE_FLOOR_DBFS;
    this.#windowsInBlock = 0;
    this.#lastLevel = Number.NEGATIVE_INFINITY;
  }

  #analyseWindow(window: Int16Array): number {
    const level = measureLevel(window).rmsDbfs;
    this.#lastLevel = level;
    // Judge against the floor of the past, then let this window update it.
    const probability =
      logistic((level - this.noiseFloorDbfs - SNR_MIDPOINT_DB) / SNR_SLOPE_DB) *
      logistic((level - SPEECH_MIN_DBFS) / SPEECH_MIN_SLOPE_DB);
    this.#currentBlockMin = Math.min(this.#currentBlockMin, level);
    if (++this.#windowsInBlock === FLOOR_BLOCK_WINDOWS) {
      this.#blockMinima.push(this.#currentBlockMin);
      if (this.#blockMinima.length > FLOOR_BLOCKS) this.#blockMinima.shift();
      this.#currentBlockMin = Number.POSITIVE_INFINITY;
      this.#windowsInBlock = 0;
    }
    return probability;
  }
}

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x));
}
