import type { SessionOutput } from '../pipeline/session.ts';

/**
 * A carrier's playback for the benchmark, as `pipeline/testing/simulated-carrier.ts` plays it (every 20 ms of
 * caller audio plays 20 ms of agent audio and acknowledges the marks whose audio has finished; `clear` drops
 * the queue and reports pending marks as dropped) but keeping only how many samples are left of each chunk:
 * the test carrier keeps a copy of everything played so that tests can listen to it, which would be counted
 * here as the session's memory and CPU.
 */
export class PlaybackCarrier implements SessionOutput {
  /** Samples left of each chunk sent, and marks, in order. */
  private queue: Array<number | string> = [];
  ended: string | undefined;
  onAck: (name: string, dropped: boolean) => void = () => {};
  /** Called when agent audio reaches the carrier (before it is queued for playback). */
  onAudio: () => void = () => {};

  /** Agent audio received by every carrier of this process, in samples. */
  static samplesReceived = 0;

  sendAudio(pcm16k: Int16Array): void {
    this.onAudio();
    PlaybackCarrier.samplesReceived += pcm16k.length;
    if (pcm16k.length > 0) this.queue.push(pcm16k.length);
  }

  sendMark(name: string): void {
    this.queue.push(name);
  }

  clear(): void {
    const pending = this.queue.filter((item): item is string => typeof item === 'string');
    this.queue = [];
    for (const mark of pending) this.onAck(mark, true);
  }

  end(reason: string): void {
    this.ended = reason;
  }

  /** 20 ms pass: play that much and acknowledge finished marks. */
  tick(samples = 320): void {
    let budget = samples;
    while (this.queue.length > 0) {
      const head = this.queue[0] as number | string;
      if (typeof head === 'string') {
        this.queue.shift();
        this.onAck(head, false);
        continue;
      }
      if (budget === 0) break;
      const take = Math.min(budget, head);
      budget -= take;
      if (take === head) this.queue.shift();
      else this.queue[0] = head - take;
    }
  }
}
