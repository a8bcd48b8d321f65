/** Test signals and measurements for codec tests: analytic tones, sweeps, seeded noise, SNR. */

/** A tone as an ideal (unrounded) signal: amplitude * sin(2 pi f (n - delay) / rate), n = 0..length-1. */
export function idealSine(
  freqHz: number,
  rateHz: number,
  length: number,
  amplitude: number,
  delay = 0,
): Float64Array {
  const out = new Float64Array(length);
  const w = (2 * Math.PI * freqHz) / rateHz;
  for (let n = 0; n < length; n++) out[n] = amplitude * Math.sin(w * (n - delay));
  return out;
}

export function toPcm16(signal: Float64Array): Int16Array {
  return Int16Array.from(signal, (v) => Math.max(-32768, Math.min(32767, Math.round(v))));
}

export function sine(freqHz: number, rateHz: number, length: number, amplitude: number): Int16Array {
  return toPcm16(idealSine(freqHz, rateHz, length, amplitude));
}

/** Linear sweep from `fromHz` to `toHz` over the signal's length. */
export function sweep(
  fromHz: number,
  toHz: number,
  rateHz: number,
  length: number,
  amplitude: number,
): Int16Array {
  const out = new Int16Array(length);
  let phase = 0;
  for (let n = 0; n < length; n++) {
    out[n] = Math.round(amplitude * Math.sin(phase));
    phase += (2 * Math.PI * (fromHz + ((toHz - fromHz) * n) / length)) / rateHz;
  }
  return out;
}

/** Uniform white noise over the whole int16 range, from a seeded xorshift32 generator (reproducible). */
export function noise(length: number, seed = 0x9e3779b9): Int16Array {
  const out = new Int16Array(length);
  let s = seed >>> 0 || 1;
  for (let n = 0; n < length; n++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[n] = (s & 0xffff) - 32768;
  }
  return out;
}

/** Every int16 value once, ascending. */
export function everyInt16(): Int16Array {
  return Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
}

/** Signal-to-noise ratio in dB of `actual` against `reference` over [from, to). */
export function snrDb(
  reference: ArrayLike<number>,
  actual: ArrayLike<number>,
  from: number,
  to: number,
): number {
  let signal = 0;
  let error = 0;
  for (let n = from; n < to; n++) {
    const r = reference[n]!;
    const d = r - actual[n]!;
    signal += r * r;
    error += d * d;
  }
  return error === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10(signal / error);
}

/** Mean power of [from, to) in dB relative to a sine of the given amplitude. */
export function powerDb(samples: ArrayLike<number>, from: number, to: number, amplitude: number): number {
  let power = 0;
  for (let n = from; n < to; n++) power += samples[n]! ** 2;
  power /= to - from;
  return power === 0 ? Number.NEGATIVE_INFINITY : 10 * Math.log10(power / (amplitude * amplitude * 0.5));
}

/** Normalised cross-correlation of `b` against `a`, at the lag (0..maxLag) where it is largest. */
export function bestCorrelation(
  a: Int16Array,
  b: Int16Array,
  maxLag: number,
): { lag: number; correlation: number } {
  let best = { lag: 0, correlation: -1 };
  for (let lag = 0; lag <= maxLag; lag++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let n = 0; n + lag < b.length && n < a.length; n++) {
      const x = a[n]!;
      const y = b[n + lag]!;
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    const correlation = aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
    if (correlation > best.correlation) best = { lag, correlation };
  }
  return best;
}

export function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
