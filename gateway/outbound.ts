import type { CarrierMedia, WireMessage } from './carriers/types.ts';
import type { PlaybackAck } from './media-handler.ts';
import { type Paced, PacedQueue, type Pacer } from './pacer.ts';
import type { StreamTelemetry } from './telemetry.ts';
import type { StreamTransport } from './transport.ts';

/**
 * Everything a stream sends: agent audio through the adapter's encoder, marks and their acks, clears, pacing
 * for carriers that need it, and the backpressure policy.
 *
 * Backpressure policy. Outbound audio is real time: late audio is worth less than no audio, and an unbounded
 * buffer is a memory leak. So:
 * - Unpaced carriers (they buffer themselves): while the socket holds more than `highWaterBytes` unsent, audio
 *   messages are dropped (counted in `droppedMessages`); control messages (mark, clear, bye) are never dropped.
 * - Paced carriers: the pacer pauses the stream until uWS reports `drain` below `lowWaterBytes`; audio queued
 *   beyond `maxQueuedAudioMs` is dropped.
 * - Each transition into backpressure counts one `backpressureEvents`; a stream stuck above the high-water
 *   mark for `closeAfterMs` is closed (4016) by the session's housekeeping.
 */

export interface BackpressureLimits {
  readonly highWaterBytes: number;
  readonly lowWaterBytes: number;
  readonly closeAfterMs: number;
  readonly maxQueuedAudioMs: number;
}

interface SentMark {
  readonly name: string;
  cleared: boolean;
}

interface Queued {
  readonly message: WireMessage;
  readonly mark: string | undefined;
}

export class OutboundPath implements Paced {
  private readonly queue = new PacedQueue<Queued>();
  private readonly sentMarks: SentMark[] = [];
  private backpressured = false;
  private backpressureSince = 0;
  private stopped = false;
  private readonly sendQueued = (q: Queued): void => this.sendNow(q.message, q.mark, performance.now());
  private readonly isBlocked = (): boolean => this.backpressured;

  constructor(
    private readonly adapter: CarrierMedia,
    private readonly transport: StreamTransport,
    private readonly telemetry: StreamTelemetry,
    private readonly pacer: Pacer,
    private readonly limits: BackpressureLimits,
    private readonly onAck: (ack: PlaybackAck) => void,
  ) {}

  audio(pcm16k: Int16Array): void {
    if (this.stopped) return;
    this.emit(this.adapter.encodeAudio(pcm16k), undefined);
  }

  mark(name: string): void {
    if (this.stopped) return;
    this.emit(this.adapter.encodeMark(name), name);
  }

  clear(): void {
    if (this.stopped) return;
    const now = performance.now();
    const droppedMarks: string[] = [];
    for (const q of this.queue.clear()) if (q.mark !== undefined) droppedMarks.push(q.mark);
    for (const m of this.sentMarks) m.cleared = true;
    for (const message of this.adapter.encodeClear()) this.sendNow(message, undefined, now);
    this.telemetry.cleared(now);
    // Marks that never left the gateway are reported after the caller's clear() returns, not inside it.
    if (droppedMarks.length > 0) {
      queueMicrotask(() => {
        for (const name of droppedMarks) this.report(name, true);
      });
    }
  }

  /** Control messages outside the audio flow (browser `ready`, `bye`), sent at once. */
  control(messages: readonly WireMessage[]): void {
    if (this.stopped) return;
    const now = performance.now();
    for (const message of messages) this.sendNow(message, undefined, now);
  }

  /** The carrier echoed a mark (or notify, checkpoint, ack). Marks we do not know of are ignored. */
  ack(name: string): void {
    const index = this.sentMarks.findIndex((m) => m.name === name);
    if (index < 0) return;
    const [mark] = this.sentMarks.splice(index, 1);
    this.report(name, mark!.cleared);
  }

  /** The carrier confirmed a clear: marks sent before it will not be played. */
  carrierCleared(): void {
    const cleared = this.sentMarks.filter((m) => m.cleared);
    if (cleared.length === 0) return;
    this.sentMarks.splice(0, this.sentMarks.length, ...this.sentMarks.filter((m) => !m.cleared));
    for (const m of cleared) this.report(m.name, true);
  }

  /** uWS drained some of the socket's buffer. */
  drain(): void {
    if (!this.backpressured || this.transport.bufferedAmount() > this.limits.lowWaterBytes) return;
    this.backpressured = false;
    if (this.queue.length > 0 && !this.stopped) this.pacer.wake(this);
  }

  pace(nowMs: number): boolean {
    if (this.stopped) return false;
    this.queue.drainDue(nowMs, this.sendQueued, this.isBlocked);
    return this.queue.length > 0 && !this.backpressured;
  }

  queuedMs(nowMs: number): number {
    return this.telemetry.queuedMs(nowMs) + this.queue.audioMs;
  }

  /** True when the peer has not read our data for longer than the limit allows. */
  stuck(nowMs: number): boolean {
    return (
      this.backpressured &&
      nowMs - this.backpressureSince > this.limits.closeAfterMs &&
      this.transport.bufferedAmount() > this.limits.highWaterBytes
    );
  }

  /** The stream ended: drop the queue, send nothing more. */
  stop(): void {
    this.stopped = true;
    this.queue.clear();
    this.pacer.remove(this);
  }

  private emit(messages: WireMessage[], mark: string | undefined): void {
    if (messages.length === 0) return;
    const last = messages.length - 1;
    if (!this.adapter.pacedOutput) {
      const now = performance.now();
      for (let i = 0; i <= last; i++) this.sendNow(messages[i]!, i === last ? mark : undefined, now);
      return;
    }
    for (let i = 0; i <= last; i++) {
      const message = messages[i]!;
      if (message.audioMs > 0 && this.queue.audioMs >= this.limits.maxQueuedAudioMs) {
        this.telemetry.outbound.droppedMessages++;
        continue;
      }
      this.queue.push({ item: { message, mark: i === last ? mark : undefined }, audioMs: message.audioMs });
    }
    // Start at once rather than on the next tick: the first frame of a reply should not wait.
    if (this.pace(performance.now())) this.pacer.wake(this);
  }

  private sendNow(message: WireMessage, mark: string | undefined, now: number): void {
    const audio = message.audioMs > 0;
    if (audio && !this.adapter.pacedOutput && this.transport.bufferedAmount() > this.limits.highWaterBytes) {
      this.enterBackpressure(now);
      this.telemetry.outbound.droppedMessages++;
      return;
    }
    const status = this.transport.send(message.data, message.binary);
    this.telemetry.outbound.messages++;
    if (status === 'dropped') {
      this.telemetry.outbound.droppedMessages++;
      this.enterBackpressure(now);
    } else if (status === 'buffered') {
      this.enterBackpressure(now);
    }
    if (audio) this.telemetry.audioSent(now, message.audioMs);
    if (mark !== undefined) {
      this.telemetry.markSent();
      this.sentMarks.push({ name: mark, cleared: false });
    }
  }

  private enterBackpressure(now: number): void {
    if (this.backpressured) return;
    this.backpressured = true;
    this.backpressureSince = now;
    this.telemetry.outbound.backpressureEvents++;
  }

  private report(name: string, dropped: boolean): void {
    this.telemetry.outbound.acks++;
    if (dropped) this.telemetry.outbound.droppedAcks++;
    this.onAck({ name, dropped });
  }
}
