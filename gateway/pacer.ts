/**
 * Real-time pacing for carriers that play what arrives instead of buffering (Vonage): each paced stream keeps a
 * queue of outbound messages and sends audio no faster than it plays, one 20 ms frame per 20 ms of wall time,
 * scheduled on an ideal time base so timer jitter does not accumulate. Control messages (marks, notifies) go
 * out as soon as the audio before them has gone.
 *
 * One timer serves every paced stream of the gateway (a timer per stream would cost more than the sends), and
 * it runs only while some stream has something queued.
 */

/** Timer period; a frame is sent at most this late, and at no point early. */
export const PACER_TICK_MS = 10;
/** After this much idle (or a stall), the schedule restarts at the present instead of bursting to catch up. */
const RESTART_AFTER_MS = 60;

export interface Paced {
  /** Sends what is due at `nowMs`; returns whether it still has work (stay scheduled). */
  pace(nowMs: number): boolean;
}

export class Pacer {
  private readonly streams = new Set<Paced>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Schedules `stream` until its `pace` answers false. */
  wake(stream: Paced): void {
    this.streams.add(stream);
    if (!this.timer) this.timer = setInterval(() => this.tick(), PACER_TICK_MS);
  }

  remove(stream: Paced): void {
    this.streams.delete(stream);
  }

  get size(): number {
    return this.streams.size;
  }

  close(): void {
    this.streams.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const now = this.now();
    for (const stream of this.streams) {
      let more = false;
      try {
        more = stream.pace(now);
      } catch {
        more = false;
      }
      if (!more) this.streams.delete(stream);
    }
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

export interface QueueEntry<T> {
  readonly item: T;
  /** Audio duration; 0 for control messages. */
  readonly audioMs: number;
}

/** A FIFO with a real-time schedule for its audio entries. */
export class PacedQueue<T> {
  private items: QueueEntry<T>[] = [];
  private head = 0;
  private nextDue: number | undefined;
  private queuedAudioMs = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** Audio waiting in the queue. */
  get audioMs(): number {
    return this.queuedAudioMs;
  }

  push(entry: QueueEntry<T>): void {
    this.items.push(entry);
    this.queuedAudioMs += entry.audioMs;
  }

  /**
   * Hands every entry that is due at `nowMs` to `send`, in order: control entries at once, audio entries one
   * per `audioMs` of schedule. Stops early when `blocked()` (backpressure).
   */
  drainDue(nowMs: number, send: (item: T) => void, blocked: () => boolean): void {
    while (this.head < this.items.length) {
      const entry = this.items[this.head]!;
      if (entry.audioMs > 0) {
        if (blocked()) break;
        if (this.nextDue === undefined || nowMs - this.nextDue > RESTART_AFTER_MS) this.nextDue = nowMs;
        if (this.nextDue > nowMs) break;
        this.nextDue += entry.audioMs;
        this.queuedAudioMs -= entry.audioMs;
      }
      this.head++;
      send(entry.item);
    }
    this.compact();
  }

  /** Empties the queue and returns what was in it. */
  clear(): T[] {
    const dropped = this.items.slice(this.head).map((e) => e.item);
    this.items = [];
    this.head = 0;
    this.queuedAudioMs = 0;
    this.nextDue = undefined;
    return dropped;
  }

  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
