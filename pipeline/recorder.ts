import { closeSync, openSync, writeSync } from 'node:fs';
import { CANONICAL_RATE, pcm16ToBytes, WAV_HEADER_BYTES, wavHeader } from '../codecs/index.ts';

const SAMPLES_PER_MS = CANONICAL_RATE / 1000;
/**
 * Agent audio reaches the recorder when it is sent to the carrier, at most a playout watermark ahead of what is
 * playing, and a barge-in can only cut audio after the heard position. Keeping the last 3 s in memory covers both
 * with room to spare; everything older goes to disk, so a 30-minute call holds ~190 KB, not 115 MB.
 */
const WINDOW_MS = 3000;
/**
 * Audio older than the window goes to disk a second at a time: one write and one shift of the window per second
 * of call, not per 20 ms frame (shifting the whole window every frame cost more than the rest of the recording).
 */
const FLUSH_BLOCK_MS = 1000;

/**
 * The call recording: a two-channel 16 kHz WAV written as the call goes (caller left, agent right). The caller's
 * frames are the clock (20 ms each); agent audio is laid at the moment it was sent, after any agent audio still
 * playing, and an interruption cuts the agent channel back to what the caller heard.
 */
export class CallRecorder {
  private readonly fd: number;
  /** Interleaved samples from `flushedSamples` on (per channel index). */
  private window = new Int16Array(2 * SAMPLES_PER_MS * (WINDOW_MS + FLUSH_BLOCK_MS) * 2);
  private flushedSamples = 0;
  private callerSamples = 0;
  private agentCursor = 0;
  private agentEnd = 0;
  private closed = false;

  constructor(private readonly file: string) {
    this.fd = openSync(file, 'w', 0o600);
    writeSync(this.fd, wavHeader(CANONICAL_RATE, 2, 0));
  }

  /** Milliseconds of call audio so far (the caller channel's length). */
  get elapsedMs(): number {
    return this.callerSamples / SAMPLES_PER_MS;
  }

  caller(frame: Int16Array): void {
    if (this.closed) return;
    this.ensure(this.callerSamples + frame.length);
    let j = (this.callerSamples - this.flushedSamples) * 2;
    for (let i = 0; i < frame.length; i++, j += 2) this.window[j] = frame[i] as number;
    this.callerSamples += frame.length;
    const older = this.callerSamples - WINDOW_MS * SAMPLES_PER_MS;
    if (older - this.flushedSamples >= FLUSH_BLOCK_MS * SAMPLES_PER_MS) this.flushOlderThan(older);
  }

  /** Agent audio sent now; it plays after whatever agent audio is still playing. */
  agent(pcm: Int16Array): void {
    if (this.closed) return;
    const start = Math.max(this.agentCursor, this.callerSamples, this.flushedSamples);
    this.ensure(start + pcm.length);
    let j = (start - this.flushedSamples) * 2 + 1;
    for (let i = 0; i < pcm.length; i++, j += 2) this.window[j] = pcm[i] as number;
    this.agentCursor = start + pcm.length;
    this.agentEnd = Math.max(this.agentEnd, this.agentCursor);
  }

  /** A barge-in: agent audio after `heardUntilMs` of the current reply never played; silence it. */
  cutAgentAfter(playingSinceMs: number, heardMs: number): void {
    const from = Math.max(this.flushedSamples, Math.round((playingSinceMs + heardMs) * SAMPLES_PER_MS));
    for (let s = from; s < this.agentEnd; s++) this.window[(s - this.flushedSamples) * 2 + 1] = 0;
    this.agentCursor = Math.min(this.agentCursor, from);
  }

  /** When the agent audio sent next would start playing, in ms of call time. */
  get agentPlayheadMs(): number {
    return Math.max(this.agentCursor, this.callerSamples) / SAMPLES_PER_MS;
  }

  /** Writes what is left, fixes the header, closes the file; returns its duration in ms. */
  finish(): number {
    if (this.closed) return this.totalSamples() / SAMPLES_PER_MS;
    const total = this.totalSamples();
    this.ensure(total);
    this.flushOlderThan(total);
    writeSync(this.fd, wavHeader(CANONICAL_RATE, 2, total * 4), 0, WAV_HEADER_BYTES, 0);
    closeSync(this.fd);
    this.closed = true;
    return total / SAMPLES_PER_MS;
  }

  get path(): string {
    return this.file;
  }

  private totalSamples(): number {
    return Math.max(this.callerSamples, this.agentEnd);
  }

  private ensure(untilSample: number): void {
    const needed = (untilSample - this.flushedSamples) * 2;
    if (needed <= this.window.length) return;
    const grown = new Int16Array(Math.max(needed, this.window.length * 2));
    grown.set(this.window);
    this.window = grown;
  }

  private flushOlderThan(sample: number): void {
    const count = Math.min(sample, this.totalSamples()) - this.flushedSamples;
    if (count <= 0) return;
    writeSync(this.fd, pcm16ToBytes(this.window.subarray(0, count * 2)));
    this.window.copyWithin(0, count * 2);
    this.window.fill(0, this.window.length - count * 2);
    this.flushedSamples += count;
  }
}
