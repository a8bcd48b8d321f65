import type { ResampleKernel } from './resample-kernel.ts';

/**
 * The polyphase resampler's inner loops: `count` outputs starting at input index `base` (relative to the current
 * input, which sits in `buffer` after `kernel.history` samples of the past) and polyphase branch `phase`.
 * The samples are doubles, converted once on the way in, so that no tap converts its sample again.
 *
 * Two loops for one computation: grouped by phase, for ratios with few phases (every integer ratio, 16k <-> 24k),
 * which computes four outputs at a time (see `accumulateRun`) and measured about twice as fast as output by
 * output; and output by output, for the many-phase ratios of 22050 Hz. A given kernel always runs through the
 * same loop, and each output's sum adds the same products in the same order whatever the call, so a stream's
 * output never depends on how it was chunked.
 */
export type ResampleLoop = (
  kernel: ResampleKernel,
  buffer: Float64Array,
  base: number,
  phase: number,
  out: Int16Array,
  count: number,
) => void;

function clamp16(value: number): number {
  const rounded = Math.round(value);
  return Math.max(-32768, Math.min(32767, rounded));
}

/** Per-output partial sums, shared: the loops run to completion, one at a time. */
let partial = new Float64Array(1024);

function zeroedSums(count: number): Float64Array {
  if (partial.length < count) partial = new Float64Array(Math.max(count, 2 * partial.length));
  partial.fill(0, 0, count);
  return partial;
}

/**
 * For o < count: sums[o] += sum_k coefs[first + k] * buffer[newest + o * step - k * stride], k < taps.
 *
 * When the taps are as far apart as the outputs (stride = step: the dense runs of upsampling, the strided runs
 * of downsampling), output o + 1 reads at tap k the sample output o read at tap k - 1. Four outputs then go
 * together, the window of four samples sliding by one per tap: one sample and one coefficient loaded per tap
 * for four multiply-adds, where an output at a time loads both for each one (measured twice as fast).
 */
function accumulateRun(
  buffer: Float64Array,
  newest: number,
  step: number,
  stride: number,
  coefs: Float64Array,
  first: number,
  taps: number,
  sums: Float64Array,
  count: number,
): void {
  const end = first + taps;
  let o = 0;
  if (stride !== step) {
    const step2 = 2 * step;
    const step3 = 3 * step;
    for (; o + 3 < count; o += 4) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let c = first, y = newest + o * step; c < end; c++, y -= stride) {
        const coef = coefs[c]!;
        a0 += coef * buffer[y]!;
        a1 += coef * buffer[y + step]!;
        a2 += coef * buffer[y + step2]!;
        a3 += coef * buffer[y + step3]!;
      }
      sums[o] = sums[o]! + a0;
      sums[o + 1] = sums[o + 1]! + a1;
      sums[o + 2] = sums[o + 2]! + a2;
      sums[o + 3] = sums[o + 3]! + a3;
    }
  } else {
    for (; o + 3 < count; o += 4) {
      const x = newest + o * step;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      let s1 = buffer[x + step]!;
      let s2 = buffer[x + 2 * step]!;
      let s3 = buffer[x + 3 * step]!;
      for (let c = first, y = x; c < end; c++, y -= step) {
        const s0 = buffer[y]!;
        const coef = coefs[c]!;
        a0 += coef * s0;
        a1 += coef * s1;
        a2 += coef * s2;
        a3 += coef * s3;
        s3 = s2;
        s2 = s1;
        s1 = s0;
      }
      sums[o] = sums[o]! + a0;
      sums[o + 1] = sums[o + 1]! + a1;
      sums[o + 2] = sums[o + 2]! + a2;
      sums[o + 3] = sums[o + 3]! + a3;
    }
  }
  for (; o < count; o++) {
    let sum = 0;
    for (let c = first, y = newest + o * step; c < end; c++, y -= stride) sum += coefs[c]! * buffer[y]!;
    sums[o] = sums[o]! + sum;
  }
}

/**
 * Outputs that share a phase come every L outputs and L/M apart in time, so M input samples apart: the outputs
 * o = g, g + L, g + 2L, ... (g < L) use the same taps, read from windows M samples apart. Group by group, each
 * of the phase's runs is added into a partial sum per output (`accumulateRun`), then the sums are rounded. For
 * M = 1 (upsampling) a group is an input sample's phase p across the call; for L = 1 (downsampling) there is
 * one group.
 */
const groupedLoop: ResampleLoop = (kernel, buffer, base, phase, out, count) => {
  const { up, down, history, phaseSegments, segmentCoef, segmentCount, segmentBack, segmentStride, coefs } =
    kernel;
  const { advance, nextPhase } = kernel;
  let newest = history + base;
  let p = phase;
  for (let g = 0; g < up && g < count; g++) {
    const outputs = Math.ceil((count - g) / up);
    const sums = zeroedSums(outputs);
    for (let s = phaseSegments[p]!; s < phaseSegments[p + 1]!; s++) {
      const first = segmentCoef[s]!;
      const taps = segmentCount[s]!;
      const x = newest - segmentBack[s]!;
      if (taps === 1) {
        const gain = coefs[first]!;
        for (let i = 0, y = x; i < outputs; i++, y += down) sums[i] = sums[i]! + gain * buffer[y]!;
      } else {
        accumulateRun(buffer, x, down, segmentStride[s]!, coefs, first, taps, sums, outputs);
      }
    }
    for (let i = 0, o = g; i < outputs; i++, o += up) out[o] = clamp16(sums[i]!);
    newest += advance[p]!;
    p = nextPhase[p]!;
  }
};

/**
 * Any L/M with many phases (the ratios of 22050 Hz to the others: L or M is 147 to 441), where outputs that
 * share a phase are too few per call to group: output by output, each looks up its phase's runs, sums them into
 * four accumulators (four taps at a time, which breaks the dependency chain of a single sum), then steps to the
 * next phase.
 */
const perOutputLoop: ResampleLoop = (kernel, buffer, base, phase, out, count) => {
  const { history, phaseSegments, segmentCoef, segmentCount, segmentBack, segmentStride, coefs } = kernel;
  const { advance, nextPhase } = kernel;
  let newest = history + base;
  let p = phase;
  for (let o = 0; o < count; o++) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    const last = phaseSegments[p + 1]!;
    for (let s = phaseSegments[p]!; s < last; s++) {
      let c = segmentCoef[s]!;
      const end = c + segmentCount[s]!;
      const s1 = segmentStride[s]!;
      const s2 = s1 + s1;
      const s3 = s2 + s1;
      const s4 = s2 + s2;
      let x = newest - segmentBack[s]!;
      for (; c + 3 < end; c += 4, x -= s4) {
        a0 += coefs[c]! * buffer[x]!;
        a1 += coefs[c + 1]! * buffer[x - s1]!;
        a2 += coefs[c + 2]! * buffer[x - s2]!;
        a3 += coefs[c + 3]! * buffer[x - s3]!;
      }
      for (; c < end; c++, x -= s1) a0 += coefs[c]! * buffer[x]!;
    }
    out[o] = clamp16(a0 + a1 + (a2 + a3));
    newest += advance[p]!;
    p = nextPhase[p]!;
  }
};

/** Up to this many phases, outputs are grouped by phase; beyond, computed one by one. */
const MAX_GROUPED_PHASES = 16;

/** The loop for a kernel; a kernel always runs through the same one. */
export function loopFor(kernel: ResampleKernel): ResampleLoop {
  return kernel.up <= MAX_GROUPED_PHASES ? groupedLoop : perOutputLoop;
}
