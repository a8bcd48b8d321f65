/**
 * PCM16 helpers: little-endian byte conversion, stereo (de)interleaving, levels and float conversion.
 * Wire PCM16 is always little-endian; on a big-endian host the conversions swap bytes (by copying).
 */

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Floor of `measureLevel().rmsDbfs`: what silence (or an empty frame) reports. */
export const MIN_DBFS = -120;

/**
 * Little-endian PCM16 bytes to samples.
 *
 * When the bytes start at an even offset (the usual case: Node's Buffer pool is 8-byte aligned) this returns a
 * view over the same memory, without copying: copy it (`.slice()`) before keeping it beyond the life of the
 * source buffer (a uWebSockets.js message, for instance). Unaligned bytes are copied. An odd byte count is a
 * caller error (use `ByteFramer` to regroup a byte stream) and throws a RangeError.
 */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  if (bytes.byteLength % 2 !== 0) {
    throw new RangeError(`PCM16 needs an even number of bytes, got ${bytes.byteLength}`);
  }
  const count = bytes.byteLength / 2;
  if (HOST_IS_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    return new Int16Array(bytes.buffer, bytes.byteOffset, count);
  }
  const samples = new Int16Array(count);
  for (let i = 0, j = 0; i < count; i++, j += 2) {
    samples[i] = ((bytes[j]! | (bytes[j + 1]! << 8)) << 16) >> 16;
  }
  return samples;
}

/**
 * Samples to little-endian PCM16 bytes. On a little-endian host (every machine we run on) the Buffer is a view
 * over the samples' memory, without copying.
 */
export function pcm16ToBytes(samples: Int16Array): Buffer {
  if (HOST_IS_LITTLE_ENDIAN) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const bytes = Buffer.allocUnsafe(samples.byteLength);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
  return bytes;
}

/** Two mono channels to one interleaved stereo buffer (L R L R ...); the shorter channel is padded with silence. */
export function interleave(left: Int16Array, right: Int16Array): Int16Array {
  const frames = Math.max(left.length, right.length);
  const stereo = new Int16Array(frames * 2);
  for (let i = 0; i < left.length; i++) stereo[2 * i] = left[i]!;
  for (let i = 0; i < right.length; i++) stereo[2 * i + 1] = right[i]!;
  return stereo;
}

/** Interleaved stereo to its two channels. An odd trailing sample (half a frame) is dropped. */
export function deinterleave(stereo: Int16Array): [left: Int16Array, right: Int16Array] {
  const frames = stereo.length >> 1;
  const left = new Int16Array(frames);
  const right = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = stereo[2 * i]!;
    right[i] = stereo[2 * i + 1]!;
  }
  return [left, right];
}

export interface Level {
  /** RMS relative to a full-scale square wave (32768), in dB; `MIN_DBFS` for silence or no samples. */
  rmsDbfs: number;
  /** Largest absolute sample value, 0..32768. */
  peak: number;
  /** Samples at either rail (32767 or -32768): a sign of clipping upstream. */
  clippedSamples: number;
}

export function measureLevel(samples: Int16Array): Level {
  let sumSquares = 0;
  let peak = 0;
  let clippedSamples = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    sumSquares += s * s;
    const magnitude = s < 0 ? -s : s;
    if (magnitude > peak) peak = magnitude;
    if (s === 32767 || s === -32768) clippedSamples++;
  }
  let rmsDbfs = MIN_DBFS;
  if (sumSquares > 0) {
    const rms = Math.sqrt(sumSquares / samples.length);
    rmsDbfs = Math.max(MIN_DBFS, 20 * Math.log10(rms / 32768));
  }
  return { rmsDbfs, peak, clippedSamples };
}

/**
 * Float samples (nominally -1..1) to PCM16: scaled by 32768, rounded to nearest, clipped to the int16 range;
 * NaN becomes 0. `pcm16ToFloat` is its exact inverse for every int16 value.
 */
export function floatToPcm16(input: Float32Array | Float64Array, out?: Int16Array): Int16Array {
  const n = input.length;
  if (out && out.length < n) throw new RangeError(`output holds ${out.length} samples, ${n} needed`);
  const target = out ?? new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const v = Math.round(input[i]! * 32768);
    target[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v || 0;
  }
  return target;
}

/** PCM16 to float: sample / 32768, so -32768 maps to exactly -1. */
export function pcm16ToFloat(input: Int16Array, out?: Float32Array): Float32Array {
  const n = input.length;
  if (out && out.length < n) throw new RangeError(`output holds ${out.length} samples, ${n} needed`);
  const target = out ?? new Float32Array(n);
  for (let i = 0; i < n; i++) target[i] = input[i]! / 32768;
  return target;
}
