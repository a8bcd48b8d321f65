/**
 * Filter design for the rational resampler: a Kaiser-windowed sinc low-pass, split into polyphase branches.
 *
 * Resampling by L/M (reduced) conceptually upsamples by L (zero stuffing), low-passes at the lower of the two
 * Nyquist frequencies, and keeps every M-th sample. With S = max(L, M), the ideal filter at the upsampled rate
 * is sinc((i - c) / S) / S: it is exactly zero at every multiple of S from its centre c, and those zeros are
 * never stored or multiplied (for 8k->16k, every other output is then a plain copy of an input sample; for
 * 16k->8k, half of the taps vanish). The window spans `zeroCrossings` zero crossings each side, so the
 * transition band, relative to the lower Nyquist frequency, has the same width for every pair of rates:
 * about (A - 8) / (2.285 * 2 * zeroCrossings * pi) (Kaiser's estimate), centred on that Nyquist frequency.
 *
 * Kernels are immutable and cached per (from, to, quality): every stream of a given conversion shares one.
 */

export type ResampleQuality = 'voice' | 'high';

interface QualityDesign {
  /** Zero crossings of the sinc on each side of its centre. */
  zeroCrossings: number;
  /** Stopband attenuation the Kaiser window is designed for, in dB (also sets the passband ripple). */
  attenuationDb: number;
}

/**
 * voice: 32 taps per phase when upsampling; transition about 0.865..1.135 of the lower Nyquist frequency (3.46
 *   to 4.54 kHz at 8 kHz), so the telephone band (to 3.4 kHz) passes with an error 65 dB or more below the
 *   signal (ripple under 0.01 dB) and tones from 4.6 kHz are rejected by about 70 dB, more further out. (Exact
 *   2:1 and 1:2 ratios at this quality use the half-band filter of resample-halfband.ts instead.)
 * high: 64 taps per phase when upsampling; transition about 0.91..1.09, 90 dB.
 */
const DESIGNS: Record<ResampleQuality, QualityDesign> = {
  voice: { zeroCrossings: 16, attenuationDb: 70 },
  high: { zeroCrossings: 32, attenuationDb: 90 },
};

/** Largest reduced factor (max of L and M) accepted; 8000 <-> 22050 needs 441, 44100 <-> 48000 needs 160. */
const MAX_FACTOR = 1024;

/** A strided run of non-zero taps; charged this many multiply-adds for its loop overhead when choosing a layout. */
const SEGMENT_OVERHEAD = 3;

export interface ResampleKernel {
  /** Upsampling factor L. */
  readonly up: number;
  /** Downsampling factor M. */
  readonly down: number;
  /** Group delay of the filter in output samples (an integer by construction). */
  readonly delay: number;
  /** Input samples that a computation may reach back before the current one; kept across calls. */
  readonly history: number;
  /** Segments of phase p are `phaseSegments[p]` up to (excluding) `phaseSegments[p + 1]`. */
  readonly phaseSegments: Int32Array;
  /** Per segment: first coefficient, number of taps, distance back from the newest input, input stride. */
  readonly segmentCoef: Int32Array;
  readonly segmentCount: Int32Array;
  readonly segmentBack: Int32Array;
  readonly segmentStride: Int32Array;
  readonly coefs: Float64Array;
  /** Per phase: how many input samples the next output moves on, and its phase. */
  readonly advance: Int32Array;
  readonly nextPhase: Int32Array;
}

function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

/** Modified Bessel function of the first kind, order zero (power series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 500; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

function kaiserBeta(attenuationDb: number): number {
  if (attenuationDb > 50) return 0.1102 * (attenuationDb - 8.7);
  if (attenuationDb >= 21) return 0.5842 * (attenuationDb - 21) ** 0.4 + 0.07886 * (attenuationDb - 21);
  return 0;
}

/** The prototype low-pass at the upsampled rate, length 2c + 1, scaled by L, exact zeros where sinc is zero. */
function prototype(up: number, span: number, centre: number, design: QualityDesign): Float64Array {
  const taps = new Float64Array(2 * centre + 1);
  const beta = kaiserBeta(design.attenuationDb);
  const i0Beta = besselI0(beta);
  for (let i = 0; i < taps.length; i++) {
    const offset = i - centre;
    if (offset === 0) {
      taps[i] = up / span;
      continue;
    }
    if (offset % span === 0) continue;
    const r = offset / centre;
    const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0Beta;
    const x = (Math.PI * offset) / span;
    taps[i] = ((up / span) * Math.sin(x) * window) / x;
  }
  return taps;
}

interface Segment {
  back: number;
  stride: number;
  coefs: number[];
}

/** Taps of one phase as (k, coefficient), k = how far back from the newest input sample. */
function phaseTaps(taps: Float64Array, up: number, phase: number): number[] {
  const column: number[] = [];
  for (let i = phase; i < taps.length; i += up) column.push(taps[i]!);
  const sum = column.reduce((a, b) => a + b, 0);
  return column.map((c) => c / sum); // unit DC gain per phase: a constant input gives a constant output
}

function trimmedRun(column: number[], first: number, stride: number): Segment | undefined {
  let start = first;
  let end = column.length - 1 - ((column.length - 1 - first) % stride);
  while (start <= end && column[start] === 0) start += stride;
  while (end >= start && column[end] === 0) end -= stride;
  if (start > end) return undefined;
  const coefs: number[] = [];
  for (let k = start; k <= end; k += stride) coefs.push(column[k]!);
  return { back: start, stride, coefs };
}

/** Lay out a phase as one dense run, or as strided runs that skip the sinc's zeros, whichever costs less. */
function layoutPhase(column: number[], period: number): Segment[] {
  const dense = trimmedRun(column, 0, 1);
  if (!dense) return [];
  if (period === 1) return [dense];
  const strided: Segment[] = [];
  for (let r = 0; r < period && r < column.length; r++) {
    const run = trimmedRun(column, r, period);
    if (run) strided.push(run);
  }
  const cost = (segments: Segment[]) =>
    segments.reduce((total, s) => total + s.coefs.length + SEGMENT_OVERHEAD, 0);
  return cost(strided) < cost([dense]) ? strided : [dense];
}

function design(fromHz: number, toHz: number, quality: ResampleQuality): ResampleKernel {
  const divisor = gcd(fromHz, toHz);
  const up = toHz / divisor;
  const down = fromHz / divisor;
  const span = Math.max(up, down);
  if (span > MAX_FACTOR) {
    throw new RangeError(`cannot resample ${fromHz} Hz to ${toHz} Hz: ratio ${up}/${down} is too fine`);
  }
  const spec = DESIGNS[quality];
  // Centre on a multiple of M so that the delay is a whole number of output samples.
  const centre = up === down ? 0 : down * Math.ceil((spec.zeroCrossings * span) / down);
  const taps = up === down ? Float64Array.of(1) : prototype(up, span, centre, spec);
  // Along one phase (k -> k + 1 moves L taps), the sinc's zeros recur every S / gcd(L, S) taps.
  const period = span / gcd(up, span);

  const phaseSegments = new Int32Array(up + 1);
  const segments: Segment[] = [];
  for (let p = 0; p < up; p++) {
    phaseSegments[p] = segments.length;
    segments.push(...layoutPhase(phaseTaps(taps, up, p), period));
  }
  phaseSegments[up] = segments.length;

  let history = 0;
  for (const segment of segments) {
    history = Math.max(history, segment.back + (segment.coefs.length - 1) * segment.stride);
  }
  const total = segments.reduce((n, s) => n + s.coefs.length, 0);
  const coefs = new Float64Array(total);
  const segmentCoef = new Int32Array(segments.length);
  const segmentCount = new Int32Array(segments.length);
  const segmentBack = new Int32Array(segments.length);
  const segmentStride = new Int32Array(segments.length);
  let at = 0;
  segments.forEach((s, i) => {
    segmentCoef[i] = at;
    segmentCount[i] = s.coefs.length;
    segmentBack[i] = s.back;
    segmentStride[i] = s.stride;
    coefs.set(s.coefs, at);
    at += s.coefs.length;
  });

  const advance = new Int32Array(up);
  const nextPhase = new Int32Array(up);
  for (let p = 0; p < up; p++) {
    advance[p] = Math.floor((p + down) / up);
    nextPhase[p] = (p + down) % up;
  }
  return {
    up,
    down,
    delay: centre / down,
    history,
    phaseSegments,
    segmentCoef,
    segmentCount,
    segmentBack,
    segmentStride,
    coefs,
    advance,
    nextPhase,
  };
}

const cache = new Map<string, ResampleKernel>();

/** Throws a RangeError unless both rates are integers from 1000 to 384000 Hz and the quality is known. */
export function checkConversion(fromHz: number, toHz: number, quality: ResampleQuality): void {
  for (const rate of [fromHz, toHz]) {
    if (!Number.isInteger(rate) || rate < 1000 || rate > 384_000) {
      throw new RangeError(`sample rate must be an integer from 1000 to 384000 Hz, got ${rate}`);
    }
  }
  if (!Object.hasOwn(DESIGNS, quality)) {
    throw new RangeError(`unknown resampler quality "${quality}" (expected voice or high)`);
  }
}

export function resampleKernel(fromHz: number, toHz: number, quality: ResampleQuality): ResampleKernel {
  checkConversion(fromHz, toHz, quality);
  const key = `${fromHz}>${toHz}:${quality}`;
  let kernel = cache.get(key);
  if (!kernel) {
    kernel = design(fromHz, toHz, quality);
    cache.set(key, kernel);
  }
  return kernel;
}
