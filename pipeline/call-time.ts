/**
 * Call time is milliseconds of caller audio (20 ms per inbound frame): the turn logic runs on it, so it is
 * exact and testable. Engine latencies are wall-clock. This maps one onto the other by remembering when each
 * recent frame arrived.
 */
const FRAME_MS = 20;
/** Frames remembered: 60 s, far longer than any latency measured against them. */
const HISTORY_FRAMES = 3000;

export class CallTime {
  private readonly arrivals = new Float64Array(HISTORY_FRAMES);
  private frames = 0;

  constructor(private readonly now: () => number) {}

  /** A caller frame arrived; returns the call time at its end. */
  frameArrived(): number {
    this.arrivals[this.frames % HISTORY_FRAMES] = this.now();
    this.frames++;
    return this.frames * FRAME_MS;
  }

  get audioMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Wall time at which the audio at `audioMs` had arrived (clamped to the remembered window). */
  wallAt(audioMs: number): number {
    if (this.frames === 0) return this.now();
    const index = Math.min(
      this.frames - 1,
      Math.max(this.frames - HISTORY_FRAMES, Math.ceil(audioMs / FRAME_MS) - 1, 0),
    );
    return this.arrivals[index % HISTORY_FRAMES] as number;
  }

  wallNow(): number {
    return this.now();
  }
}
