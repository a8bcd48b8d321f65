/**
 * A carrier's playback of agent audio, as Twilio does it: audio sent to the call is queued and played in order
 * at real-time pace; a mark is echoed once the audio queued before it has played; `clear` drops the queue and
 * echoes every pending mark at once. The caller calls `playFrame` every 20 ms. Audio is mu-law 8 kHz, where
 * one byte is one sample.
 */

/** 20 ms at 8 kHz. */
export const FRAME_SAMPLES = 160;
/** Twilio buffers about ten minutes; audio beyond that is dropped. */
const MAX_QUEUED_SAMPLES = 10 * 60 * 8000;
/** Mu-law code of a zero sample. */
export const MULAW_SILENCE = 0xff;

type QueueItem = { audio: Uint8Array; offset: number } | { mark: string };

export interface PlayedFrame {
  /** The 20 ms that played: agent audio, completed with silence when the queue ran out. */
  readonly audio: Uint8Array;
  /** Agent audio samples in this frame (0: the agent was silent). */
  readonly agentSamples: number;
  /** Marks whose audio finished playing in this frame, in order. */
  readonly marks: readonly string[];
}

export class AgentPlayback {
  private queue: QueueItem[] = [];
  private head = 0;
  private queuedSamples = 0;
  /** Samples refused because the queue was full. */
  dropped = 0;

  get queuedMs(): number {
    return this.queuedSamples / 8;
  }

  enqueue(mulaw: Uint8Array): void {
    if (mulaw.length === 0) return;
    if (this.queuedSamples + mulaw.length > MAX_QUEUED_SAMPLES) {
      this.dropped += mulaw.length;
      return;
    }
    this.queue.push({ audio: mulaw, offset: 0 });
    this.queuedSamples += mulaw.length;
  }

  mark(name: string): void {
    this.queue.push({ mark: name });
  }

  /** Drops the queued audio; returns the pending marks, to be echoed now. */
  clear(): string[] {
    const marks: string[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const item = this.queue[i] as QueueItem;
      if ('mark' in item) marks.push(item.mark);
    }
    this.queue = [];
    this.head = 0;
    this.queuedSamples = 0;
    return marks;
  }

  /** Plays the next 20 ms. */
  playFrame(): PlayedFrame {
    const audio = new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE);
    const marks: string[] = [];
    let filled = 0;
    while (this.head < this.queue.length) {
      const item = this.queue[this.head] as QueueItem;
      if ('mark' in item) {
        marks.push(item.mark);
        this.head++;
        continue;
      }
      if (filled === FRAME_SAMPLES) break;
      const take = Math.min(FRAME_SAMPLES - filled, item.audio.length - item.offset);
      audio.set(item.audio.subarray(item.offset, item.offset + take), filled);
      filled += take;
      item.offset += take;
      this.queuedSamples -= take;
      if (item.offset === item.audio.length) this.head++;
    }
    this.compact();
    return { audio, agentSamples: filled, marks };
  }

  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 256) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
