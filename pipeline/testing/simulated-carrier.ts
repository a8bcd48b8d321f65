import type { SessionOutput } from '../session.ts';

/**
 * A carrier's playback, simulated in call time: agent audio queues up; every 20 ms of caller audio plays 20 ms of
 * it and acknowledges the marks whose audio has finished; `clear` drops the queue and reports pending marks as
 * dropped, as real carriers do. What a test listens to is what a caller would have heard.
 */
export class SimulatedCarrier implements SessionOutput {
  readonly played: Int16Array[] = [];
  readonly events: string[] = [];
  ended: string | undefined;
  private queue: Array<{ samples: number } | { mark: string }> = [];
  private playedSamples = 0;
  onAck: (name: string, dropped: boolean) => void = () => {};

  sendAudio(pcm16k: Int16Array): void {
    this.played.push(pcm16k);
    this.queue.push({ samples: pcm16k.length });
  }

  sendMark(name: string): void {
    this.queue.push({ mark: name });
  }

  clear(): void {
    this.events.push('clear');
    const pending = this.queue.flatMap((item) => ('mark' in item ? [item.mark] : []));
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
      const head = this.queue[0]!;
      if ('mark' in head) {
        this.queue.shift();
        this.onAck(head.mark, false);
        continue;
      }
      if (budget === 0) break;
      const take = Math.min(budget, head.samples);
      head.samples -= take;
      budget -= take;
      this.playedSamples += take;
      if (head.samples === 0) this.queue.shift();
    }
  }

  /** Agent audio not played yet, in samples. */
  get queuedSamples(): number {
    return this.queue.reduce((sum, item) => sum + ('samples' in item ? item.samples : 0), 0);
  }

  get playedMs(): number {
    return this.playedSamples / 16;
  }
}
