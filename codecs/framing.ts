/**
 * Fixed-size framing of sample and byte streams, with carry-over of partial frames between pushes.
 * Canonical audio moves in 20 ms frames (docs/architecture.md, "Media path").
 */

/** Length of one canonical audio frame. */
export const FRAME_MS = 20;

/**
 * The canonical sample rate: every part between the carrier edges (VAD, STT, TTS output, the pipeline, the
 * recorder) hears and speaks PCM16 mono at this rate. The one name for it.
 */
export const CANONICAL_RATE = 16_000;

/** Samples in one 20 ms frame at `rateHz` (160 at 8 kHz, 320 at 16 kHz, 441 at 22.05 kHz, 960 at 48 kHz). */
export function samplesPerFrame(rateHz: number): number {
  const samples = (rateHz * FRAME_MS) / 1000;
  if (!Number.isInteger(samples) || samples <= 0) {
    throw new RangeError(`${rateHz} Hz has no whole number of samples in ${FRAME_MS} ms`);
  }
  return samples;
}

/**
 * The frames `Framer.push` returns are cut from blocks of this many, allocated together: allocating and
 * collecting a typed array's own memory costs several times the copy (about 1.2 µs against 0.15 for a 320-sample
 * frame), and was most of the framing's cost. A frame kept alone keeps its block (5 KB at 16 kHz) alive.
 */
const FRAMES_PER_BLOCK = 8;

/**
 * Cuts a sample stream into frames of exactly `samplesPerFrame` samples. Every returned frame is a fresh array
 * the caller owns; a partial frame waits for the next push.
 */
export class Framer {
  readonly #size: number;
  readonly #partial: Int16Array;
  #fill = 0;
  /** Where the next frames `push` returns are copied; a frame's `buffer` is its block's. */
  #block = new Int16Array(0);
  #blockUsed = 0;

  constructor(samplesPerFrame: number) {
    if (!Number.isInteger(samplesPerFrame) || samplesPerFrame <= 0) {
      throw new RangeError(`samplesPerFrame must be a positive integer, got ${samplesPerFrame}`);
    }
    this.#size = samplesPerFrame;
    this.#partial = new Int16Array(samplesPerFrame);
  }

  /** Samples held back, waiting to complete a frame (always less than one frame). */
  get pending(): number {
    return this.#fill;
  }

  /**
   * The frames `samples` completes, each a copy the caller owns: a view of its own samples in a block shared
   * with the framer's next frames (never written again), so its `byteOffset` is not always 0.
   */
  push(samples: Int16Array): Int16Array[] {
    const frames: Int16Array[] = [];
    this.lend(samples, (frame) => frames.push(this.#copy(frame)));
    return frames;
  }

  #copy(frame: Int16Array): Int16Array {
    const size = this.#size;
    if (this.#blockUsed === this.#block.length) {
      this.#block = new Int16Array(size * FRAMES_PER_BLOCK);
      this.#blockUsed = 0;
    }
    const copy = this.#block.subarray(this.#blockUsed, this.#blockUsed + size);
    this.#blockUsed += size;
    copy.set(frame);
    return copy;
  }

  /**
   * `push` for audio used at once: each completed frame is lent to `use` as a view (of `samples` or of the
   * framer's own partial frame) that is valid only during the call, so no frame is allocated.
   */
  lend(samples: Int16Array, use: (frame: Int16Array) => void): void {
    const size = this.#size;
    let offset = 0;
    if (this.#fill > 0) {
      const take = Math.min(size - this.#fill, samples.length);
      this.#partial.set(samples.subarray(0, take), this.#fill);
      this.#fill += take;
      offset = take;
      if (this.#fill < size) return;
      this.#fill = 0;
      use(this.#partial);
    }
    if (offset === 0 && samples.length === size) {
      // Exactly one frame, as a carrier edge usually gets: the input itself, without a view of it.
      use(samples);
      return;
    }
    while (samples.length - offset >= size) {
      use(samples.subarray(offset, offset + size));
      offset += size;
    }
    if (offset < samples.length) {
      this.#partial.set(samples.subarray(offset));
      this.#fill = samples.length - offset;
    }
  }

  /**
   * Hands back the partial frame and empties the framer: padded with silence to a whole frame when `pad` is
   * true, as it is otherwise; undefined when nothing is pending.
   */
  flush(pad = false): Int16Array | undefined {
    if (this.#fill === 0) return undefined;
    const rest = pad ? new Int16Array(this.#size) : new Int16Array(this.#fill);
    rest.set(this.#partial.subarray(0, this.#fill));
    this.#fill = 0;
    return rest;
  }
}

export interface ByteFramerOptions {
  /** Smallest chunk to send; a multiple of the unit. Default: one unit (fixed-size chunks). */
  minBytes?: number;
  /** Largest chunk to send; rounded down to a multiple of the unit. Default: `minBytes`. */
  maxBytes?: number;
  /** Byte used to pad the last chunk: 0 for PCM16 (default), 0xff for mu-law silence, 0xd5 for A-law. */
  padByte?: number;
}

/**
 * Cuts a byte stream into chunks whose size is a multiple of `unitBytes`, between `minBytes` and `maxBytes`.
 * With only a unit it emits fixed chunks (Vonage: exactly 320 or 640 bytes); with bounds it emits, once at
 * least `minBytes` are pending, the largest whole number of units up to `maxBytes` (Exotel: multiples of 320
 * bytes, at least 3,200, at most 100 KB). Chunks are fresh Buffers the caller owns.
 */
export class ByteFramer {
  readonly #unit: number;
  readonly #min: number;
  readonly #max: number;
  readonly #padByte: number;
  #buffer: Buffer;
  #fill = 0;

  constructor(unitBytes: number, options: ByteFramerOptions = {}) {
    if (!Number.isInteger(unitBytes) || unitBytes <= 0) {
      throw new RangeError(`unitBytes must be a positive integer, got ${unitBytes}`);
    }
    const min = options.minBytes ?? unitBytes;
    const max = Math.floor((options.maxBytes ?? min) / unitBytes) * unitBytes;
    if (!Number.isInteger(min) || min <= 0 || min % unitBytes !== 0) {
      throw new RangeError(`minBytes must be a positive multiple of ${unitBytes}, got ${min}`);
    }
    if (max < min) throw new RangeError(`maxBytes (${options.maxBytes}) is below minBytes (${min})`);
    this.#unit = unitBytes;
    this.#min = min;
    this.#max = max;
    this.#padByte = options.padByte ?? 0;
    this.#buffer = Buffer.alloc(max);
  }

  /** Bytes held back, waiting for a chunk to fill. */
  get pending(): number {
    return this.#fill;
  }

  push(bytes: Uint8Array): Buffer[] {
    const needed = this.#fill + bytes.length;
    if (needed > this.#buffer.length) {
      const grown = Buffer.alloc(Math.max(needed, this.#buffer.length * 2));
      this.#buffer.copy(grown, 0, 0, this.#fill);
      this.#buffer = grown;
    }
    this.#buffer.set(bytes, this.#fill);
    this.#fill = needed;

    const chunks: Buffer[] = [];
    let offset = 0;
    while (this.#fill - offset >= this.#min) {
      const whole = Math.floor((this.#fill - offset) / this.#unit) * this.#unit;
      const size = Math.min(whole, this.#max);
      chunks.push(Buffer.from(this.#buffer.subarray(offset, offset + size)));
      offset += size;
    }
    if (offset > 0) {
      this.#buffer.copyWithin(0, offset, this.#fill);
      this.#fill -= offset;
    }
    return chunks;
  }

  /**
   * Hands back what is pending and empties the framer. With `pad` (the default) the chunk is padded with
   * `padByte` up to a whole number of units and at least `minBytes`, so the carrier accepts it; without, it is
   * returned as is. Undefined when nothing is pending.
   */
  flush(pad = true): Buffer | undefined {
    if (this.#fill === 0) return undefined;
    const size = pad ? Math.max(this.#min, Math.ceil(this.#fill / this.#unit) * this.#unit) : this.#fill;
    const rest = Buffer.alloc(size, this.#padByte);
    this.#buffer.copy(rest, 0, 0, this.#fill);
    this.#fill = 0;
    return rest;
  }
}
