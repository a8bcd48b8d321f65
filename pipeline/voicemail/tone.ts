/**
 * Steady single tones in caller audio (PCM16 16 kHz, 20 ms frames): the beep of an answering machine. Each frame
 * is Hann-windowed, zero-padded to 512 samples and transformed (one 512-point FFT, ~25 µs here); it is tonal when
 * one spectral peak holds nearly all of the telephone band's energy. A tone is a run of tonal frames at one
 * frequency, loud enough and long enough. Speech spreads its energy over many harmonics and glides in pitch;
 * DTMF keys are two tones at once; clicks are short: none of them makes a run.
 *
 * Deterministic, with its buffers allocated once; time is ms of audio, given with every frame.
 */

import { CANONICAL_RATE } from '../../codecs/index.ts';

const FFT_SIZE = 512;
const BIN_HZ = CANONICAL_RATE / FFT_SIZE;
/** The telephone band (carriers' 8 kHz audio holds nothing above 4 kHz): the energy a tone is measured against. */
const BAND_LOW_HZ = 100;
const BAND_HIGH_HZ = 4000;
/** Where answering machine beeps sit (most are 440-1,400 Hz). */
export const BEEP_MIN_HZ = 400;
export const BEEP_MAX_HZ = 2000;
/**
 * A 20 ms Hann window's main lobe spans ±2 bins of its own 50 Hz resolution, ±3.2 bins of the zero-padded FFT:
 * a pure tone's energy lies within ±3 bins of its peak.
 */
const PEAK_HALF_WIDTH_BINS = 3;
/**
 * Share of the band's energy in the peak for a frame to count as tonal. A generated tone measures above 0.98; an
 * equal-level DTMF pair about 0.5; speech rarely above 0.6 (its energy is spread over harmonics). 0.85 still
 * takes a beep over a line with some noise or codec distortion.
 */
export const MIN_TONALITY = 0.85;
/** Quieter frames are not tones: beeps are loud (-25 to -10 dBFS); line noise sits below -50 dBFS. */
export const MIN_TONE_DBFS = -40;
/**
 * Frames of one tone must agree within this much: an oscillator is steady to a hertz, and the interpolated
 * estimate of a partly filled frame is within ~10 Hz, while a voice glides further within 140 ms.
 */
export const MAX_TONE_DRIFT_HZ = 25;
/** A beep of 150 ms covers at least 7 whole 20 ms frames wherever it starts; DTMF keys and clicks are shorter. */
export const MIN_TONE_FRAMES = 7;

export interface FrameTone {
  /** Strongest frequency in the band, interpolated between bins. */
  frequencyHz: number;
  /** Share of the band's energy within the peak, 0..1. */
  tonality: number;
  /** RMS level of the frame. */
  levelDbfs: number;
}

export type ToneEvent =
  /** A tone has lasted `MIN_TONE_FRAMES`; it began at `startMs`. */
  | { type: 'tone_started'; startMs: number; atMs: number; frequencyHz: number; tonality: number }
  /** A confirmed tone stopped at `atMs`. */
  | { type: 'tone_ended'; startMs: number; atMs: number; durationMs: number; frequencyHz: number };

const LOG2_SIZE = Math.log2(FFT_SIZE);
const BIT_REVERSED = new Uint16Array(FFT_SIZE);
for (let i = 0; i < FFT_SIZE; i++) {
  let r = 0;
  for (let b = 0; b < LOG2_SIZE; b++) r |= ((i >> b) & 1) << (LOG2_SIZE - 1 - b);
  BIT_REVERSED[i] = r;
}
const COS = new Float64Array(FFT_SIZE / 2);
const SIN = new Float64Array(FFT_SIZE / 2);
for (let i = 0; i < FFT_SIZE / 2; i++) {
  COS[i] = Math.cos((2 * Math.PI * i) / FFT_SIZE);
  SIN[i] = -Math.sin((2 * Math.PI * i) / FFT_SIZE);
}
const windows = new Map<number, Float64Array>();

function hann(length: number): Float64Array {
  let window = windows.get(length);
  if (!window) {
    window = new Float64Array(length);
    for (let i = 0; i < length; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (length - 1 || 1));
    windows.set(length, window);
  }
  return window;
}

/** In-place iterative radix-2 FFT of `re` + i`im` (length FFT_SIZE). */
function fft(re: Float64Array, im: Float64Array): void {
  for (let i = 0; i < FFT_SIZE; i++) {
    const j = BIT_REVERSED[i] as number;
    if (j > i) {
      const tr = re[i] as number;
      re[i] = re[j] as number;
      re[j] = tr;
      const ti = im[i] as number;
      im[i] = im[j] as number;
      im[j] = ti;
    }
  }
  for (let size = 2; size <= FFT_SIZE; size *= 2) {
    const half = size / 2;
    const step = FFT_SIZE / size;
    for (let start = 0; start < FFT_SIZE; start += size) {
      for (let k = 0; k < half; k++) {
        const wr = COS[k * step] as number;
        const wi = SIN[k * step] as number;
        const a = start + k;
        const b = a + half;
        const br = re[b] as number;
        const bi = im[b] as number;
        const xr = br * wr - bi * wi;
        const xi = br * wi + bi * wr;
        re[b] = (re[a] as number) - xr;
        im[b] = (im[a] as number) - xi;
        re[a] = (re[a] as number) + xr;
        im[a] = (im[a] as number) + xi;
      }
    }
  }
}

const LOW_BIN = Math.ceil(BAND_LOW_HZ / BIN_HZ);
const HIGH_BIN = Math.floor(BAND_HIGH_HZ / BIN_HZ);

/** RMS level of `sumSquares` over `n` samples, dBFS (-120 for silence). */
function dbfs(sumSquares: number, n: number): number {
  const rms = Math.sqrt(sumSquares / Math.max(1, n));
  return rms > 0 ? 20 * Math.log10(rms / 32768) : -120;
}

/** RMS level of a frame's first `FFT_SIZE` samples (what `FrameAnalyzer` measures), dBFS. */
export function levelDbfs(frame: Int16Array): number {
  const n = Math.min(frame.length, FFT_SIZE);
  let sumSquares = 0;
  for (let i = 0; i < n; i++) sumSquares += (frame[i] as number) ** 2;
  return dbfs(sumSquares, n);
}

/** Measures one frame (at most 512 samples). */
export class FrameAnalyzer {
  private readonly re = new Float64Array(FFT_SIZE);
  private readonly im = new Float64Array(FFT_SIZE);
  private readonly power = new Float64Array(FFT_SIZE / 2 + 1);

  analyze(frame: Int16Array): FrameTone {
    const n = Math.min(frame.length, FFT_SIZE);
    const window = hann(n);
    let sumSquares = 0;
    for (let i = 0; i < FFT_SIZE; i++) {
      const sample = i < n ? (frame[i] as number) : 0;
      sumSquares += sample * sample;
      this.re[i] = i < n ? sample * (window[i] as number) : 0;
      this.im[i] = 0;
    }
    const level = dbfs(sumSquares, n);
    fft(this.re, this.im);
    let total = 0;
    let peak = LOW_BIN;
    for (let k = LOW_BIN; k <= HIGH_BIN; k++) {
      const p = (this.re[k] as number) ** 2 + (this.im[k] as number) ** 2;
      this.power[k] = p;
      total += p;
      if (p > (this.power[peak] as number)) peak = k;
    }
    let inPeak = 0;
    for (
      let k = Math.max(LOW_BIN, peak - PEAK_HALF_WIDTH_BINS);
      k <= Math.min(HIGH_BIN, peak + PEAK_HALF_WIDTH_BINS);
      k++
    )
      inPeak += this.power[k] as number;
    return {
      frequencyHz: this.interpolate(peak),
      tonality: total > 0 ? inPeak / total : 0,
      levelDbfs: level,
    };
  }

  /** Parabolic interpolation of the peak on log power: the frequency between bins. */
  private interpolate(peak: number): number {
    if (peak <= LOW_BIN || peak >= HIGH_BIN) return peak * BIN_HZ;
    const a = Math.log((this.power[peak - 1] as number) + 1e-12);
    const b = Math.log((this.power[peak] as number) + 1e-12);
    const c = Math.log((this.power[peak + 1] as number) + 1e-12);
    const denominator = a - 2 * b + c;
    const offset = denominator === 0 ? 0 : (0.5 * (a - c)) / denominator;
    return (peak + offset) * BIN_HZ;
  }
}

interface Run {
  startMs: number;
  /** End of its last tonal frame. */
  endMs: number;
  frames: number;
  frequencyHz: number;
  tonality: number;
  confirmed: boolean;
}

/** Finds beeps: steady single tones of `BEEP_MIN_HZ`-`BEEP_MAX_HZ` lasting at least `MIN_TONE_FRAMES` frames. */
export class ToneDetector {
  private readonly analyzer = new FrameAnalyzer();
  private run: Run | null = null;

  /** Whether a confirmed tone is sounding. */
  get active(): boolean {
    return this.run?.confirmed === true;
  }

  /** One frame ending at `endMs`; at most one event. */
  push(frame: Int16Array, endMs: number): ToneEvent | null {
    const startMs = endMs - (frame.length / CANONICAL_RATE) * 1000;
    // A frame too quiet to be a tone needs no transform: most of a call's frames are silence or line noise.
    const tone = levelDbfs(frame) < MIN_TONE_DBFS ? null : this.analyzer.analyze(frame);
    const tonal =
      tone !== null &&
      tone.tonality >= MIN_TONALITY &&
      tone.levelDbfs >= MIN_TONE_DBFS &&
      tone.frequencyHz >= BEEP_MIN_HZ &&
      tone.frequencyHz <= BEEP_MAX_HZ;
    const run = this.run;
    if (tonal && run && Math.abs(tone.frequencyHz - run.frequencyHz) <= MAX_TONE_DRIFT_HZ) {
      run.frames++;
      run.endMs = endMs;
      run.tonality = Math.min(run.tonality, tone.tonality);
      if (run.confirmed || run.frames < MIN_TONE_FRAMES) return null;
      run.confirmed = true;
      return {
        type: 'tone_started',
        startMs: run.startMs,
        atMs: endMs,
        frequencyHz: Math.round(run.frequencyHz),
        tonality: round3(run.tonality),
      };
    }
    const ended: ToneEvent | null = run?.confirmed
      ? {
          type: 'tone_ended',
          startMs: run.startMs,
          atMs: run.endMs,
          durationMs: run.endMs - run.startMs,
          frequencyHz: Math.round(run.frequencyHz),
        }
      : null;
    this.run = tonal
      ? {
          startMs,
          endMs,
          frames: 1,
          frequencyHz: tone.frequencyHz,
          tonality: tone.tonality,
          confirmed: false,
        }
      : null;
    return ended;
  }
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
