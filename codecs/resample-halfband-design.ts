/**
 * Design of the half-band low-pass used for exact 2:1 and 1:2 resampling, at the higher of the two rates.
 *
 * A half-band filter has a centre tap of 1/2, taps c[j] at +-(2j + 1) and zeros at every other even offset, so
 * its response is H(f) = 1/2 + 2 sum_j c[j] cos(2 pi f (2j + 1)) (f in cycles per sample) and H(f) + H(1/2 - f)
 * = 1: the passband error mirrors the stopband, one set of taps controls both. The taps are the minimax
 * (equiripple) solution over the stopband, reached by Lawson's iteratively reweighted least squares, which gets
 * within 0.1 dB of the optimum in a few dozen iterations; for the same stopband it needs about 1/8 fewer taps
 * than a Kaiser window. Then they are rounded to integers for the fixed-point loops, keeping the DC gain exact.
 */

/** Frequency grid density over the stopband, in points per tap pair. */
const GRID_PER_PAIR = 16;
const LAWSON_ITERATIONS = 40;

/** Solves the symmetric positive definite system `a x = b` (n x n, row-major) by Cholesky; overwrites `a`. */
function solveSpd(a: Float64Array, b: Float64Array, n: number): Float64Array {
  for (let j = 0; j < n; j++) {
    let diagonal = a[j * n + j]!;
    for (let k = 0; k < j; k++) diagonal -= a[j * n + k]! ** 2;
    const root = Math.sqrt(diagonal);
    a[j * n + j] = root;
    for (let i = j + 1; i < n; i++) {
      let sum = a[i * n + j]!;
      for (let k = 0; k < j; k++) sum -= a[i * n + k]! * a[j * n + k]!;
      a[i * n + j] = sum / root;
    }
  }
  const x = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < i; k++) x[i]! -= a[i * n + k]! * x[k]!;
    x[i]! /= a[i * n + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    for (let k = i + 1; k < n; k++) x[i]! -= a[k * n + i]! * x[k]!;
    x[i]! /= a[i * n + i]!;
  }
  return x;
}

/** H(f) of a half-band filter given its taps c[j] at +-(2j + 1). */
export function halfBandResponse(taps: ArrayLike<number>, frequency: number): number {
  let sum = 0.5;
  for (let j = 0; j < taps.length; j++) sum += 2 * taps[j]! * Math.cos(2 * Math.PI * frequency * (2 * j + 1));
  return sum;
}

/**
 * The `pairs` taps c[0..pairs-1] of the half-band filter that minimises the largest |H(f)| for f from
 * `stopbandEdge` (cycles per sample, above 1/4) to 1/2.
 */
export function designHalfBand(pairs: number, stopbandEdge: number): Float64Array {
  const points = GRID_PER_PAIR * pairs;
  const basis = new Float64Array(points * pairs);
  for (let g = 0; g < points; g++) {
    const frequency = stopbandEdge + ((0.5 - stopbandEdge) * g) / (points - 1);
    for (let j = 0; j < pairs; j++)
      basis[g * pairs + j] = 2 * Math.cos(2 * Math.PI * frequency * (2 * j + 1));
  }
  const weights = new Float64Array(points).fill(1 / points);
  let taps: Float64Array = new Float64Array(pairs);
  for (let iteration = 0; iteration < LAWSON_ITERATIONS; iteration++) {
    // Weighted least squares: minimise sum_g w[g] H(f_g)^2, i.e. (B'WB) c = -B'W (1/2).
    const normal = new Float64Array(pairs * pairs);
    const right = new Float64Array(pairs);
    for (let g = 0; g < points; g++) {
      const w = weights[g]!;
      const row = g * pairs;
      for (let i = 0; i < pairs; i++) {
        const wi = w * basis[row + i]!;
        right[i]! -= 0.5 * wi;
        for (let j = 0; j <= i; j++) normal[i * pairs + j]! += wi * basis[row + j]!;
      }
    }
    for (let i = 0; i < pairs; i++)
      for (let j = 0; j < i; j++) normal[j * pairs + i] = normal[i * pairs + j]!;
    taps = solveSpd(normal, right, pairs);
    // Lawson's update: weight each point by its error, so the largest errors pull hardest next time.
    let total = 0;
    for (let g = 0; g < points; g++) {
      let response = 0.5;
      for (let j = 0; j < pairs; j++) response += taps[j]! * basis[g * pairs + j]!;
      weights[g]! *= Math.abs(response);
      total += weights[g]!;
    }
    for (let g = 0; g < points; g++) weights[g]! /= total;
  }
  return taps;
}

/** Largest |H(f)| from `stopbandEdge` to 1/2 on a grid fine enough for taps up to about 100 pairs. */
export function stopbandPeak(taps: ArrayLike<number>, stopbandEdge: number, points = 4000): number {
  let peak = 0;
  for (let g = 0; g < points; g++) {
    const frequency = stopbandEdge + ((0.5 - stopbandEdge) * g) / (points - 1);
    peak = Math.max(peak, Math.abs(halfBandResponse(taps, frequency)));
  }
  return peak;
}

/**
 * Taps as integers scaled by 2^bits whose sum is exactly 2^(bits - 2), so that with the centre (2^(bits - 1)) the
 * DC gain is exactly 1 and a constant comes out as the same constant. Rounding leaves the sum a few units off;
 * each unit goes, one at a time, to the tap where it raises the stopband peak least.
 */
export function quantizeHalfBand(taps: Float64Array, bits: number, stopbandEdge: number): Int32Array {
  const scale = 2 ** bits;
  const quantized = Int32Array.from(taps, (tap) => Math.round(tap * scale));
  const peakOf = (candidate: Int32Array) =>
    stopbandPeak(
      Array.from(candidate, (tap) => tap / scale),
      stopbandEdge,
      400,
    );
  for (;;) {
    const missing = scale / 4 - quantized.reduce((total, tap) => total + tap, 0);
    if (missing === 0) return quantized;
    const step = Math.sign(missing);
    let best = 0;
    let bestPeak = Number.POSITIVE_INFINITY;
    for (let j = 0; j < quantized.length; j++) {
      quantized[j]! += step;
      const peak = peakOf(quantized);
      quantized[j]! -= step;
      if (peak < bestPeak) {
        bestPeak = peak;
        best = j;
      }
    }
    quantized[best]! += step;
  }
}
