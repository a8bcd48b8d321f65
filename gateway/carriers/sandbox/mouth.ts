import { type CarrierFrames, SILENCE_FRAME } from './callee-audio.ts';

/** What the callee is saying: utterances queued in order and sent one 20 ms frame per tick; silence between. */
export class Mouth {
  private readonly utterances: CarrierFrames[] = [];
  private position = 0;

  get speaking(): boolean {
    return this.utterances.length > 0;
  }

  say(frames: CarrierFrames): void {
    if (frames.length > 0) this.utterances.push(frames);
  }

  /** The next frame to send. */
  next(): Uint8Array {
    const current = this.utterances[0];
    if (!current) return SILENCE_FRAME;
    const frame = current[this.position++] as Uint8Array;
    if (this.position >= current.length) {
      this.utterances.shift();
      this.position = 0;
    }
    return frame;
  }
}
