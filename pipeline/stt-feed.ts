import type { SttStream } from '../engines/stt/types.ts';

/**
 * Caller audio on its way to the STT, in fewer and larger pieces where that costs nothing. Every piece pushed
 * to a streaming STT is a message on its socket (a write system call and framing): 50 a second per call in
 * 20 ms frames. Frames are gathered into chunks of `CHUNK_MS`, except when the caller's voice has just fallen
 * quiet (`prompt`): then what is gathered goes at once and every frame follows as it comes, so the STT hears
 * the silence its endpointing waits for without delay. Partial transcripts of speech come at most one chunk
 * later than they would frame by frame; the end of the turn does not.
 */
export const CHUNK_MS = 100;
const SAMPLES_PER_MS = 16;

export class SttAudioFeed {
  /** Reused for every chunk: an STT copies what it keeps (callers reuse their frame buffers). */
  private readonly chunk: Int16Array;
  private filled = 0;

  constructor(
    private readonly stt: Pick<SttStream, 'push'>,
    chunkMs = CHUNK_MS,
  ) {
    this.chunk = new Int16Array(chunkMs * SAMPLES_PER_MS);
  }

  /** One caller frame; `prompt`: the STT should have it now (the caller's voice has just fallen quiet). */
  push(frame: Int16Array, prompt: boolean): void {
    if (prompt) {
      this.flush();
      this.stt.push(frame);
      return;
    }
    if (frame.length <= this.chunk.length - this.filled) {
      this.chunk.set(frame, this.filled);
      this.filled += frame.length;
      if (this.filled === this.chunk.length) this.flush();
      return;
    }
    let at = 0;
    while (at < frame.length) {
      const take = Math.min(frame.length - at, this.chunk.length - this.filled);
      this.chunk.set(frame.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === this.chunk.length) this.flush();
    }
  }

  /** Sends what is gathered. */
  flush(): void {
    if (this.filled === 0) return;
    const samples = this.filled;
    this.filled = 0;
    this.stt.push(this.chunk.subarray(0, samples));
  }
}
