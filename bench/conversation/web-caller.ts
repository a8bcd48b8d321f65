/**
 * One scripted caller on a web call (gateway/web/PROTOCOL.md): it sends its microphone in real time, 20 ms
 * PCM16 16 kHz frames (silence unless it is saying something), and plays the agent's audio as a browser does:
 * buffered, in order, at real time, answering each mark once the audio before it has played and each `clear`
 * by dropping what it holds. It records what the caller hears: when agent audio plays (intervals of playback
 * time), when `clear`s arrive, and when its own speech and noise went out.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

const FRAME_SAMPLES = 320;
const FRAME_MS = 20;
const TICK_MS = 5;
/** Samples per ms of agent audio (PCM16 16 kHz). */
const BYTES_PER_MS = 32;
/** Two pieces of playback closer than this are one stretch of sound. */
const CONTIGUOUS_MS = 0.5;

export interface Interval {
  startMs: number;
  endMs: number;
}

export interface CallerRecord {
  /** Stretches of agent audio the caller heard, in time order (ms, `performance.now()`). */
  heard: Interval[];
  /** When each `clear` arrived. */
  clears: number[];
  /** When the first agent audio arrived. */
  firstAudioMs: number | null;
  /** Call events the server sent (`interruption`, `caller.turn`, ...), for the report. */
  events: Array<{ atMs: number; type: string; detail: Record<string, unknown> }>;
  closeCode: number | null;
}

export class WebCaller {
  readonly record: CallerRecord = { heard: [], clears: [], firstAudioMs: null, events: [], closeCode: null };
  readonly #ws: WebSocket;
  readonly #mic: Int16Array[] = [];
  /** Frames queued on the microphone, and taken from it, since the call began. */
  #micQueued = 0;
  #micSent = 0;
  /** Told the send time of a microphone frame (by its number) when it goes out. */
  readonly #onFrameSent = new Map<number, (atMs: number) => void>();
  #nextFrameMs = 0;
  #ticker: NodeJS.Timeout | undefined;
  /** When what the caller holds of the agent's audio finishes playing. */
  #playEndMs = 0;
  readonly #ackTimers = new Set<NodeJS.Timeout>();
  #ready: Promise<void>;
  #closed = false;

  private constructor(url: string) {
    this.#ws = new WebSocket(url);
    this.#ws.binaryType = 'nodebuffer';
    this.#ready = new Promise((resolve, reject) => {
      this.#ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) this.#onAudio(data.length / BYTES_PER_MS);
        else this.#onText(data.toString(), resolve);
      });
      this.#ws.once('error', reject);
      this.#ws.once('close', (code) => {
        this.record.closeCode = code;
        this.#closed = true;
        this.#stopTicker();
        reject(new Error(`the call's socket closed (${code}) before ready`));
      });
    });
  }

  static async join(url: string, timeoutMs: number): Promise<WebCaller> {
    const caller = new WebCaller(url);
    await once(caller.#ws, 'open');
    caller.#ws.send(JSON.stringify({ type: 'hello', codec: 'pcm16', sample_rate: 16000 }));
    caller.#startTicker();
    const timer = setTimeout(() => caller.#ws.terminate(), timeoutMs);
    try {
      await caller.#ready;
    } finally {
      clearTimeout(timer);
    }
    return caller;
  }

  /** Says `audio` (16 kHz PCM16) after anything already queued; resolves with when it went out. */
  async say(audio: Int16Array): Promise<Interval> {
    const first = this.#micQueued;
    for (let at = 0; at < audio.length; at += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(audio.subarray(at, at + FRAME_SAMPLES));
      this.#mic.push(frame);
      this.#micQueued++;
    }
    const last = this.#micQueued - 1;
    if (last < first) return { startMs: performance.now(), endMs: performance.now() };
    const sentAt = (n: number) => new Promise<number>((resolve) => this.#onFrameSent.set(n, resolve));
    const [startMs, lastSentMs] = await Promise.all([sentAt(first), sentAt(last)]);
    return { startMs, endMs: lastSentMs + FRAME_MS };
  }

  /** Resolves once the caller has heard `ms` of agent audio. */
  heardAtLeast(ms: number, timeoutMs: number): Promise<void> {
    return this.#until(() => heardMs(this.record.heard, performance.now()) >= ms, timeoutMs);
  }

  /**
   * Resolves once the agent's first turn has played out (the server's `agent.turn` says so: a pause between
   * its clauses is not its end) and nothing has played for `quietMs` since.
   */
  quietAfterFirstTurn(quietMs: number, timeoutMs: number): Promise<void> {
    return this.#until(
      () =>
        this.record.events.some((e) => e.type === 'agent.turn') &&
        performance.now() - this.#playEndMs >= quietMs,
      timeoutMs,
    );
  }

  /** Keeps sending silence for `ms`. */
  async listen(ms: number): Promise<void> {
    await this.say(new Int16Array((ms * 16000) / 1000));
  }

  async hangUp(): Promise<void> {
    this.#stopTicker();
    for (const timer of this.#ackTimers) clearTimeout(timer);
    if (this.#closed) return;
    this.#ws.send(JSON.stringify({ type: 'bye', reason: 'caller_hung_up' }));
    this.#ws.close(1000);
    await Promise.race([once(this.#ws, 'close'), new Promise((r) => setTimeout(r, 2000))]);
  }

  #until(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (condition()) resolve();
        else if (this.#closed) reject(new Error(`the call ended (${this.record.closeCode})`));
        else if (performance.now() > deadline) reject(new Error('timed out'));
        else setTimeout(check, TICK_MS);
      };
      check();
    });
  }

  #startTicker(): void {
    this.#nextFrameMs = performance.now();
    this.#ticker = setInterval(() => this.#sendDueFrames(), TICK_MS);
  }

  #stopTicker(): void {
    if (this.#ticker) clearInterval(this.#ticker);
    this.#ticker = undefined;
  }

  /** Every frame due by now goes out: a late timer catches up rather than stretching the caller's speech. */
  #sendDueFrames(): void {
    const now = performance.now();
    while (this.#nextFrameMs <= now && !this.#closed) {
      const spoken = this.#mic.shift();
      const frame = spoken ?? new Int16Array(FRAME_SAMPLES);
      this.#ws.send(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength));
      this.#nextFrameMs += FRAME_MS;
      if (!spoken) continue;
      const n = this.#micSent++;
      const told = this.#onFrameSent.get(n);
      if (told) {
        this.#onFrameSent.delete(n);
        told(performance.now());
      }
    }
  }

  #onAudio(ms: number): void {
    const now = performance.now();
    this.record.firstAudioMs ??= now;
    const startMs = Math.max(now, this.#playEndMs);
    const last = this.record.heard.at(-1);
    if (last && startMs - last.endMs <= CONTIGUOUS_MS) last.endMs = startMs + ms;
    else this.record.heard.push({ startMs, endMs: startMs + ms });
    this.#playEndMs = startMs + ms;
  }

  #onText(text: string, ready: () => void): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    const now = performance.now();
    const type = String(message['type']);
    if (type === 'ready') ready();
    else if (type === 'mark') this.#ackWhenPlayed(String(message['name']));
    else if (type === 'clear') this.#clear(now);
    else if (type !== 'bye') this.record.events.push({ atMs: now, type, detail: message });
  }

  #ackWhenPlayed(name: string): void {
    const timer = setTimeout(
      () => {
        this.#ackTimers.delete(timer);
        if (!this.#closed) this.#ws.send(JSON.stringify({ type: 'ack', name }));
      },
      Math.max(0, this.#playEndMs - performance.now()),
    );
    this.#ackTimers.add(timer);
  }

  #clear(now: number): void {
    this.record.clears.push(now);
    for (const timer of this.#ackTimers) clearTimeout(timer);
    this.#ackTimers.clear();
    // What was still queued for playback is never heard.
    const heard = this.record.heard;
    for (const i of heard) i.endMs = Math.min(i.endMs, now);
    heard.splice(0, heard.length, ...heard.filter((i) => i.endMs > i.startMs));
    this.#playEndMs = Math.min(this.#playEndMs, now);
    this.#ws.send(JSON.stringify({ type: 'cleared' }));
  }
}

/** Agent audio heard up to `nowMs`. */
export function heardMs(heard: readonly Interval[], nowMs: number): number {
  let total = 0;
  for (const i of heard) total += Math.max(0, Math.min(i.endMs, nowMs) - i.startMs);
  return total;
}
