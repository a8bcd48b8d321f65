/**
 * The agent's outbound audio for one call. Audio goes to the carrier in chunks, each followed by a mark; the
 * carrier acknowledges a mark once the audio before it has played, so the playout always knows what the caller
 * has heard. At most `highWatermarkMs` of unacknowledged audio is in the carrier's buffer: more waits here, and
 * sending resumes when acknowledgements bring it under `lowWatermarkMs`. A small carrier buffer is what makes a
 * barge-in flush take effect at once and the heard position exact.
 */
export interface PlayoutSink {
  sendAudio(pcm16k: Int16Array): void;
  sendMark(name: string): void;
  clear(): void;
}

export interface PlayoutOptions {
  /** Unacknowledged audio allowed at the carrier before sending pauses. */
  highWatermarkMs: number;
  /** Sending resumes when unacknowledged audio falls below this. */
  lowWatermarkMs: number;
}

/**
 * 400 ms in flight keeps the carrier ahead of network jitter while a flush still stops the voice within a
 * breath; 200 ms is where sending resumes so there is always audio queued at the carrier.
 */
export const DEFAULT_PLAYOUT: PlayoutOptions = { highWatermarkMs: 400, lowWatermarkMs: 200 };

const SAMPLES_PER_MS = 16;

/** A piece of text handed to speech (a clause) and its audio: how much of it exists and how much was heard. */
interface Segment {
  text: string;
  totalMs: number;
  heardMs: number;
}

interface Chunk {
  turnId: string;
  pcm: Int16Array;
  segment: Segment;
}

interface InFlight {
  mark: string;
  turnId: string;
  ms: number;
  segment: Segment;
}

export interface HeardSoFar {
  /** Milliseconds of the turn's audio the caller has heard. */
  ms: number;
  /**
   * The text heard: segments played to their end whole, the one cut off in part (its words in proportion to
   * the share of its audio played, rounded down: a word half heard was not heard).
   */
  text: string;
}

export class Playout {
  private readonly queue: Chunk[] = [];
  private readonly inFlight: InFlight[] = [];
  private inFlightMs = 0;
  private paused = false;
  /** Held back by `pause` (barge-in), as opposed to `paused` by the watermark. */
  private held = false;
  private markSeq = 0;
  private readonly segments = new Map<string, Segment[]>();
  private readonly listeners: { idle: Array<() => void> } = { idle: [] };

  constructor(
    private readonly sink: PlayoutSink,
    private readonly options: PlayoutOptions = DEFAULT_PLAYOUT,
  ) {}

  /** Queues a turn's audio; `text` is what this audio says (for the heard position). */
  enqueue(turnId: string, pcm: Int16Array, text = ''): void {
    if (pcm.length === 0) return;
    let segments = this.segments.get(turnId);
    if (!segments) {
      segments = [];
      this.segments.set(turnId, segments);
    }
    let segment = segments.at(-1);
    if (text || !segment) {
      segment = { text, totalMs: 0, heardMs: 0 };
      segments.push(segment);
    }
    segment.totalMs += pcm.length / SAMPLES_PER_MS;
    this.queue.push({ turnId, pcm, segment });
    this.pump();
  }

  /** The carrier played everything up to this mark. Marks of other calls or already flushed are ignored. */
  onPlaybackAck(mark: string): void {
    const index = this.inFlight.findIndex((f) => f.mark === mark);
    if (index < 0) return;
    for (const done of this.inFlight.splice(0, index + 1)) {
      this.inFlightMs -= done.ms;
      done.segment.heardMs += done.ms;
    }
    if (this.paused && this.inFlightMs < this.options.lowWatermarkMs) this.paused = false;
    this.pump();
    if (this.isIdle()) for (const listener of this.listeners.idle.splice(0)) listener();
  }

  /**
   * Barge-in: drops everything queued or buffered at the carrier. Returns what the caller heard of `turnId`,
   * counting the part of the chunk that was playing by its share of the duration.
   */
  flush(turnId?: string): HeardSoFar {
    const heard = turnId ? this.heardOf(turnId) : { ms: 0, text: '' };
    this.queue.length = 0;
    const hadAudio = this.inFlight.length > 0;
    this.inFlight.length = 0;
    this.inFlightMs = 0;
    this.paused = false;
    this.held = false;
    if (hadAudio) this.sink.clear();
    for (const listener of this.listeners.idle.splice(0)) listener();
    return heard;
  }

  heardOf(turnId: string): HeardSoFar {
    let ms = 0;
    const text: string[] = [];
    for (const segment of this.segments.get(turnId) ?? []) {
      ms += segment.heardMs;
      if (segment.heardMs <= 0 || !segment.text) continue;
      if (segment.heardMs >= segment.totalMs) {
        text.push(segment.text);
        continue;
      }
      const words = segment.text.split(/\s+/);
      const heardWords = Math.floor((words.length * segment.heardMs) / segment.totalMs);
      if (heardWords > 0) text.push(words.slice(0, heardWords).join(' '));
    }
    return { ms, text: text.join(' ') };
  }

  /** Forgets a finished turn's accounting. */
  forget(turnId: string): void {
    this.segments.delete(turnId);
  }

  /** Queued here plus unacknowledged at the carrier, in ms. */
  get pendingMs(): number {
    return this.inFlightMs + this.queue.reduce((sum, c) => sum + c.pcm.length / SAMPLES_PER_MS, 0);
  }

  isIdle(): boolean {
    return this.queue.length === 0 && this.inFlight.length === 0;
  }

  /** Resolves when everything queued has played (or was flushed). */
  drained(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.listeners.idle.push(resolve));
  }

  /**
   * Holds back audio not yet sent (a tentative barge-in): what the carrier already has plays out, at most the
   * high watermark. `resume` goes on from where it stopped.
   */
  pause(): void {
    this.held = true;
  }

  resume(): void {
    this.held = false;
    this.pump();
  }

  /** Drops queued audio of turns other than `turnId` (a stale turn's late audio). */
  dropOtherTurns(turnId: string): void {
    for (let i = this.queue.length - 1; i >= 0; i--)
      if (this.queue[i]?.turnId !== turnId) this.queue.splice(i, 1);
  }

  private pump(): void {
    while (!this.paused && !this.held && this.queue.length > 0) {
      const chunk = this.queue.shift() as Chunk;
      const ms = chunk.pcm.length / SAMPLES_PER_MS;
      const mark = `${chunk.turnId}:${++this.markSeq}`;
      this.sink.sendAudio(chunk.pcm);
      this.sink.sendMark(mark);
      this.inFlight.push({ mark, turnId: chunk.turnId, ms, segment: chunk.segment });
      this.inFlightMs += ms;
      if (this.inFlightMs >= this.options.highWatermarkMs) this.paused = true;
    }
  }
}
