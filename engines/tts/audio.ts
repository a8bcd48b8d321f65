/**
 * Small stream helpers shared by the TTS providers: regrouping samples into fixed chunks, and turning a byte
 * stream of little-endian PCM16 into samples when reads may split a sample in two.
 */
import { CANONICAL_RATE, pcm16FromBytes } from '../../codecs/index.ts';

/** Chunk length the providers yield: short enough to start playout early, long enough to keep overhead low. */
export const CHUNK_MS = 100;

export const CHUNK_SAMPLES = (CANONICAL_RATE * CHUNK_MS) / 1000;

/** Regroups a stream of PCM16 pieces of any sizes into chunks of `size` samples; the last one may be shorter. */
export class PcmChunker {
  readonly #size: number;
  #pending: Int16Array;
  #filled = 0;

  constructor(size = CHUNK_SAMPLES) {
    if (!Number.isInteger(size) || size <= 0) throw new RangeError(`chunk size must be a positive integer`);
    this.#size = size;
    this.#pending = new Int16Array(size);
  }

  /** Adds samples; returns every chunk they completed (each a new array the caller may keep). */
  push(samples: Int16Array): Int16Array[] {
    const chunks: Int16Array[] = [];
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(this.#size - this.#filled, samples.length - offset);
      this.#pending.set(samples.subarray(offset, offset + take), this.#filled);
      this.#filled += take;
      offset += take;
      if (this.#filled === this.#size) {
        chunks.push(this.#pending);
        this.#pending = new Int16Array(this.#size);
        this.#filled = 0;
      }
    }
    return chunks;
  }

  /** The incomplete last chunk, if any, and a reset. */
  flush(): Int16Array[] {
    if (this.#filled === 0) return [];
    const last = this.#pending.slice(0, this.#filled);
    this.#filled = 0;
    return [last];
  }
}

/**
 * Little-endian PCM16 from a byte stream whose reads may end in the middle of a sample: the odd byte is kept and
 * joined to the next read. The samples returned may view the input's memory: use them before the next read.
 */
export class Pcm16ByteStream {
  #carry: number | undefined;

  push(bytes: Uint8Array): Int16Array {
    let input = bytes;
    if (this.#carry !== undefined) {
      input = new Uint8Array(bytes.byteLength + 1);
      input[0] = this.#carry;
      input.set(bytes, 1);
      this.#carry = undefined;
    }
    if (input.byteLength % 2 === 1) {
      this.#carry = input[input.byteLength - 1]!;
      input = input.subarray(0, input.byteLength - 1);
    }
    return pcm16FromBytes(input);
  }

  /** True when half a sample is still waiting: at the end of a stream it means the stream was truncated. */
  get hasPartialSample(): boolean {
    return this.#carry !== undefined;
  }

  reset(): void {
    this.#carry = undefined;
  }
}
