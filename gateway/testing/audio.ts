/** Test signals and a tone detector, to check that audio survives a round trip with its pitch and level. */

export function sine(
  rateHz: number,
  frequencyHz: number,
  samples: number,
  amplitude = 8000,
  phase0 = 0,
): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    out[i] = Math.round(amplitude * Math.sin(phase0 + (2 * Math.PI * frequencyHz * i) / rateHz));
  }
  return out;
}

/**
 * Share of the signal's energy at `frequencyHz`, 0..1: Goertzel over the Hann-windowed block, normalised so a
 * pure tone at that frequency scores about 1 and noise or other tones score near 0.
 */
export function toneShare(samples: Int16Array, rateHz: number, frequencyHz: number): number {
  const n = samples.length;
  if (n < 2) return 0;
  const coeff = 2 * Math.cos((2 * Math.PI * frequencyHz) / rateHz);
  let s1 = 0;
  let s2 = 0;
  let total = 0;
  let sumW = 0;
  let sumW2 = 0;
  for (let i = 0; i < n; i++) {
    const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
    sumW += w;
    sumW2 += w * w;
    const x = samples[i]! * w;
    total += x * x;
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  if (total === 0) return 0;
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return Math.min(1, power / total / ((sumW * sumW) / (2 * sumW2)));
}

export function rms(samples: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return samples.length === 0 ? 0 : Math.sqrt(sum / samples.length);
}

export function concat(chunks: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
