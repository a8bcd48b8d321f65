import type { SessionOutput } from '../session.ts';

/** What the caller heard of one agent turn, in call time. */
export interface TurnPlayback {
  /** The turn's audio as played, in order. */
  pcm: Int16Array[];
  samples: number;
  /** Call time at the end of the 20 ms in which its first (last) sample played. */
  firstAtMs: number;
  lastAtMs: number;
}

type Item = { pcm: Int16Array; offset: number; turnId: string | null } | { mark: string };

/**
 * A carrier's playback, simulated in call time: agent audio queues up; every 20 ms of caller audio plays 20 ms of
 * it and acknowledges the marks whose audio has finished; `clear` drops the queue and reports pending marks as
 * dropped, as real carriers do. What a test listens to is what a caller would have heard, per agent turn (marks
 * are named `<turnId>:<n>` by the playout), with when it played.
 */
export class SimulatedCarrier implements SessionOutput {
  readonly played: Int16Array[] = [];
  readonly events: string[] = [];
  /** Call time of each `clear`. */
  readonly clears: number[] = [];
  readonly turns = new Map<string, TurnPlayback>();
  ended: string | undefined;
  private queue: Item[] = [];
  private playedSamples = 0;
  private ticks = 0;
  onAck: (name: string, dropped: boolean) => void = () => {};

  sendAudio(pcm16k: Int16Array): void {
    this.played.push(pcm16k);
    this.queue.push({ pcm: pcm16k, offset: 0, turnId: null });
  }

  sendMark(name: string): void {
    const turnId = name.split(':')[0] ?? name;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const item = this.queue[i] as Item;
      if ('mark' in item || item.turnId !== null) break;
      item.turnId = turnId;
    }
    this.queue.push({ mark: name });
  }

  clear(): void {
    this.events.push('clear');
    this.clears.push(this.nowMs);
    const pending = this.queue.flatMap((item) => ('mark' in item ? [item.mark] : []));
    this.queue = [];
    for (const mark of pending) this.onAck(mark, true);
  }

  end(reason: string): void {
    this.ended = reason;
  }

  /** 20 ms pass: play that much and acknowledge finished marks. */
  tick(samples = 320): void {
    this.ticks++;
    let budget = samples;
    while (this.queue.length > 0) {
      const head = this.queue[0] as Item;
      if ('mark' in head) {
        this.queue.shift();
        this.onAck(head.mark, false);
        continue;
      }
      if (budget === 0) break;
      const take = Math.min(budget, head.pcm.length - head.offset);
      this.record(head.turnId ?? '?', head.pcm.subarray(head.offset, head.offset + take));
      head.offset += take;
      budget -= take;
      this.playedSamples += take;
      if (head.offset === head.pcm.length) this.queue.shift();
    }
  }

  /** Call time: 20 ms per tick. */
  get nowMs(): number {
    return this.ticks * 20;
  }

  /** Agent audio not played yet, in samples. */
  get queuedSamples(): number {
    return this.queue.reduce((sum, item) => sum + ('pcm' in item ? item.pcm.length - item.offset : 0), 0);
  }

  get playedMs(): number {
    return this.playedSamples / 16;
  }

  /** One turn's played audio, joined. */
  audioOf(turnId: string): Int16Array {
    const parts = this.turns.get(turnId)?.pcm ?? [];
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  private record(turnId: string, pcm: Int16Array): void {
    let turn = this.turns.get(turnId);
    if (!turn) {
      turn = { pcm: [], samples: 0, firstAtMs: this.nowMs, lastAtMs: this.nowMs };
      this.turns.set(turnId, turn);
    }
    turn.pcm.push(pcm.slice());
    turn.samples += pcm.length;
    turn.lastAtMs = this.nowMs;
  }
}
