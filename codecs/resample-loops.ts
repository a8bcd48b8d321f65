import type { ResampleKernel } from './resample-kernel.ts';

/**
 * The resampler's inner loops: `count` outputs starting at input index `base` (relative to the current input,
 * which sits in `buffer` after `kernel.history` samples of the past) and polyphase branch `phase`.
 *
 * Three loops for one computation: integer upsampling (each input yields L outputs, every phase a single dense
 * run or a plain copy), integer downsampling (one phase), and any rational ratio. The specialised ones drop the
 * per-output phase bookkeeping, which measured about a third of the cost of 8k<->16k in the general loop.
 * Every run of more than one tap holds a multiple of four taps (see UNROLL) and is summed into four
 * accumulators. The first two loops fold symmetric runs (the half-band filters of 8k<->16k): a tap pair that
 * shares a coefficient costs one multiplication, which measured 20-25% faster. A given kernel always runs
 * through the same loop, so a stream's output never depends on how it was chunked.
 */
export type ResampleLoop = (
  kernel: ResampleKernel,
  buffer: Int16Array,
  base: number,
  phase: number,
  out: Int16Array,
  count: number,
) => void;

function clamp16(value: number): number {
  const rounded = Math.round(value);
  return Math.max(-32768, Math.min(32767, rounded));
}

/**
 * M = 1: every input sample yields L outputs, so a call starts at phase 0 and yields exactly L outputs per
 * input. Phase by phase (its run's metadata read once per call), each phase is a copy (one tap of gain 1) or
 * one dense run.
 */
const interpolate: ResampleLoop = (kernel, buffer, base, _phase, out, count) => {
  const { up, history, phaseSegments, segmentCoef, segmentCount, segmentBack, coefs } = kernel;
  const inputs = count / up;
  for (let p = 0; p < up; p++) {
    const s = phaseSegments[p]!;
    const first = segmentCoef[s]!;
    const taps = segmentCount[s]!;
    const end = first + taps;
    let newest = history + base - segmentBack[s]!;
    if (taps === 1) {
      const gain = coefs[first]!;
      for (let o = p; o < count; o += up, newest++) out[o] = clamp16(gain * buffer[newest]!);
      continue;
    }
    if (kernel.segmentSymmetric[s] === 1) {
      const middle = first + taps / 2;
      for (let i = 0, o = p; i < inputs; i++, o += up, newest++) {
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let c = first, x = newest, y = newest - taps + 1; c < middle; c += 4, x -= 4, y += 4) {
          a0 += coefs[c]! * (buffer[x]! + buffer[y]!);
          a1 += coefs[c + 1]! * (buffer[x - 1]! + buffer[y + 1]!);
          a2 += coefs[c + 2]! * (buffer[x - 2]! + buffer[y + 2]!);
          a3 += coefs[c + 3]! * (buffer[x - 3]! + buffer[y + 3]!);
        }
        out[o] = clamp16(a0 + a1 + (a2 + a3));
      }
      continue;
    }
    for (let i = 0, o = p; i < inputs; i++, o += up, newest++) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let c = first, x = newest; c < end; c += 4, x -= 4) {
        a0 += coefs[c]! * buffer[x]!;
        a1 += coefs[c + 1]! * buffer[x - 1]!;
        a2 += coefs[c + 2]! * buffer[x - 2]!;
        a3 += coefs[c + 3]! * buffer[x - 3]!;
      }
      out[o] = clamp16(a0 + a1 + (a2 + a3));
    }
  }
};

/** Per-output partial sums of `decimate`, shared: the loops run to completion, one at a time. */
let partial = new Float64Array(1024);

/**
 * L = 1: a single phase; each output moves M inputs on. Run by run (metadata read once per call), each run's
 * dot product is added into a partial sum per output, then the sums are rounded.
 */
const decimate: ResampleLoop = (kernel, buffer, base, _phase, out, count) => {
  const { down, history, phaseSegments, segmentCoef, segmentCount, segmentBack, segmentStride, coefs } =
    kernel;
  const { segmentSymmetric } = kernel;
  if (partial.length < count) partial = new Float64Array(Math.max(count, 2 * partial.length));
  const sums = partial;
  sums.fill(0, 0, count);
  for (let s = phaseSegments[0]!; s < phaseSegments[1]!; s++) {
    const first = segmentCoef[s]!;
    const taps = segmentCount[s]!;
    const s1 = segmentStride[s]!;
    const s2 = s1 + s1;
    const s3 = s2 + s1;
    const s4 = s2 + s2;
    let newest = history + base - segmentBack[s]!;
    if (taps === 1) {
      const gain = coefs[first]!;
      for (let o = 0; o < count; o++, newest += down) sums[o] = sums[o]! + gain * buffer[newest]!;
    } else if (segmentSymmetric[s] === 1) {
      const middle = first + taps / 2;
      const span = (taps - 1) * s1;
      for (let o = 0; o < count; o++, newest += down) {
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let c = first, x = newest, y = newest - span; c < middle; c += 4, x -= s4, y += s4) {
          a0 += coefs[c]! * (buffer[x]! + buffer[y]!);
          a1 += coefs[c + 1]! * (buffer[x - s1]! + buffer[y + s1]!);
          a2 += coefs[c + 2]! * (buffer[x - s2]! + buffer[y + s2]!);
          a3 += coefs[c + 3]! * (buffer[x - s3]! + buffer[y + s3]!);
        }
        sums[o] = sums[o]! + (a0 + a1 + (a2 + a3));
      }
    } else {
      const end = first + taps;
      for (let o = 0; o < count; o++, newest += down) {
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let c = first, x = newest; c < end; c += 4, x -= s4) {
          a0 += coefs[c]! * buffer[x]!;
          a1 += coefs[c + 1]! * buffer[x - s1]!;
          a2 += coefs[c + 2]! * buffer[x - s2]!;
          a3 += coefs[c + 3]! * buffer[x - s3]!;
        }
        sums[o] = sums[o]! + (a0 + a1 + (a2 + a3));
      }
    }
  }
  for (let o = 0; o < count; o++) out[o] = clamp16(sums[o]!);
};

/** Any L/M: each output looks up its phase's runs, then steps to the next phase. */
const rational: ResampleLoop = (kernel, buffer, base, phase, out, count) => {
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
      const taps = segmentCount[s]!;
      let x = newest - segmentBack[s]!;
      if (taps === 1) {
        a0 += coefs[c]! * buffer[x]!;
        continue;
      }
      const end = c + taps;
      const s1 = segmentStride[s]!;
      const s2 = s1 + s1;
      const s3 = s2 + s1;
      const s4 = s2 + s2;
      for (; c < end; c += 4, x -= s4) {
        a0 += coefs[c]! * buffer[x]!;
        a1 += coefs[c + 1]! * buffer[x - s1]!;
        a2 += coefs[c + 2]! * buffer[x - s2]!;
        a3 += coefs[c + 3]! * buffer[x - s3]!;
      }
    }
    out[o] = clamp16(a0 + a1 + (a2 + a3));
    newest += advance[p]!;
    p = nextPhase[p]!;
  }
};

/** The loop for a kernel: interpolate needs every phase to be a single stride-1 run. */
export function loopFor(kernel: ResampleKernel): ResampleLoop {
  if (kernel.down === 1) {
    for (let p = 0; p < kernel.up; p++) {
      const s = kernel.phaseSegments[p]!;
      if (kernel.phaseSegments[p + 1] !== s + 1 || kernel.segmentStride[s] !== 1) return rational;
    }
    return interpolate;
  }
  return kernel.up === 1 ? decimate : rational;
}
