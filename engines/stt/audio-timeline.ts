/**
 * Recent audio of one stream, addressed by absolute sample index (sample 0 is the first ever pushed), so that
 * positions reported later by a VAD can be cut out of it. Holds chunks as pushed; `dropBefore` forgets the past.
 */
export class AudioTimeline {
  /** Chunks held, oldest first, with the absolute index of each chunk's first sample. */
  readonly #chunks: { start: number; samples: Int16Array }[] = [];
  #end = 0;

  /** Absolute index just past the last sample pushed. */
  get end(): number {
    return this.#end;
  }

  /** Absolute index of the oldest sample still held. */
  get start(): number {
    return this.#chunks[0]?.start ?? this.#end;
  }

  /** Keeps a copy: callers reuse their frame buffers. */
  append(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.#chunks.push({ start: this.#end, samples: samples.slice() });
    this.#end += samples.length;
  }

  /** A copy of samples [from, to), clamped to what is held. */
  slice(from: number, to: number): Int16Array {
    const lo = Math.max(from, this.start);
    const hi = Math.min(to, this.#end);
    const out = new Int16Array(Math.max(0, hi - lo));
    for (const chunk of this.#chunks) {
      const chunkEnd = chunk.start + chunk.samples.length;
      if (chunkEnd <= lo) continue;
      if (chunk.start >= hi) break;
      const a = Math.max(lo, chunk.start);
      const b = Math.min(hi, chunkEnd);
      out.set(chunk.samples.subarray(a - chunk.start, b - chunk.start), a - lo);
    }
    return out;
  }

  /** Forgets every sample before `index`. */
  dropBefore(index: number): void {
    while (this.#chunks.length > 0) {
      const first = this.#chunks[0]!;
      const firstEnd = first.start + first.samples.length;
      if (firstEnd <= index) {
        this.#chunks.shift();
        continue;
      }
      if (first.start < index) {
        this.#chunks[0] = { start: index, samples: first.samples.subarray(index - first.start) };
      }
      break;
    }
  }
}
