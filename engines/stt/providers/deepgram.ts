/**
 * Streaming speech to text over the Deepgram live WebSocket (`/v1/listen`), with Deepgram itself or any server
 * that speaks its protocol. Binary PCM16 frames go up as they are pushed (buffered until the socket opens);
 * `KeepAlive` goes up when no audio was sent for a while (Deepgram closes a socket idle for 10 s), `Finalize` on
 * `flush()`, `CloseStream` on `end()`. Turn logic (partials, one final per turn) is in deepgram-protocol.ts.
 *
 * Built on `ws` rather than `@deepgram/sdk` v5: the SDK does accept a base URL and runs against a local server,
 * but its reconnecting socket reports a refused handshake as a clean close (code 1000) with the HTTP status only
 * inside an error's message text, falls back to reading DEEPGRAM_API_KEY from the environment, and reconnects
 * by default. We need the status to tell retryable failures from bad keys, and no hidden reconnects.
 *
 * Closing: the stream always ends the way the protocol asks, so the provider stops billing at once and sees a
 * normal close: `CloseStream`, then the server sends its last results and closes (1000). Past `closeTimeoutMs`
 * we close (1000) ourselves. Aborting, or a reader leaving the loop, does the same without waiting to read the
 * results; only a socket still connecting is dropped.
 *
 * Reconnect policy: none. A connection that fails or drops mid-call ends the stream with an `error` event
 * (`EngineError`, retryable unless the server refused us with a 4xx), after a `final` (`endOfTurn: false`) of
 * any words already finalised; the caller decides whether to open a new stream (the lost audio is gone).
 */
import WebSocket from 'ws';
import { pcm16ToBytes } from '../../../codecs/index.ts';
import { EngineError } from '../../errors.ts';
import { EventQueue } from '../event-queue.ts';
import type { SpeechToText, SttCapabilities, SttEvent, SttStream, SttStreamOptions } from '../types.ts';
import {
  CLOSE_STREAM,
  FINALIZE,
  KEEP_ALIVE,
  listenUrl,
  parseServerMessage,
  TurnAssembler,
} from './deepgram-protocol.ts';

export const DEEPGRAM_STT_ENGINE = 'stt:deepgram';

export interface DeepgramTranscriberOptions {
  /** `wss://api.deepgram.com` by default; `ws://`/`http(s)://` accepted, a path prefix kept. */
  baseUrl?: string;
  /** Sent as `Authorization: Token <key>`; omitted when empty (self-hosted servers). */
  apiKey?: string;
  model?: string;
  /** Silence after speech before Deepgram marks `speech_final`. */
  endpointingMs?: number;
  /**
   * Gap after the last word before the `UtteranceEnd` fallback (a commit when noise keeps `speech_final` from
   * coming); Deepgram's minimum, 1000, so the fallback comes inside the turn-end policy's longest wait.
   */
  utteranceEndMs?: number;
  smartFormat?: boolean;
  /** KeepAlive is sent at this period while no audio goes up. */
  keepAliveIntervalMs?: number;
  connectTimeoutMs?: number;
  /** After `CloseStream`, how long the server may take to send its last results and close. */
  closeTimeoutMs?: number;
}

export const DEEPGRAM_DEFAULTS = {
  baseUrl: 'wss://api.deepgram.com',
  model: 'nova-3',
  // Deepgram's own default (10 ms) commits inside a breath on phone audio. The commit is evidence, not the
  // turn's end (pipeline/turn/endpointing.ts): the turn still waits the silence its words ask for, at least
  // 200 ms (a finished sentence: 0.4 x the default 500 ms endpointing_ms). At 100 ms the final, punctuated words
  // come early enough to start the answer (pipeline/speculative-reply.ts) halfway through that wait.
  endpointingMs: 100,
  utteranceEndMs: 1_000,
  smartFormat: true,
  // The reference asks for KeepAlive every 3-5 s (a socket idle 10 s is closed). Checked at this period, the
  // longest gap without anything sent is under two periods: 6 s, well inside the 10 s.
  keepAliveIntervalMs: 3_000,
  // Deepgram answers the upgrade in 100-500 ms; 5 s of a caller's audio is what we buffer meanwhile, and a
  // handshake slower than that means the service is unwell and the caller's fallback should take over.
  connectTimeoutMs: 5_000,
  // The server finishes the audio it holds (under a second behind real time) and closes; 5 s covers a slow
  // server, and past it the socket is dropped so a stuck server cannot hold `end()` forever.
  closeTimeoutMs: 5_000,
} as const satisfies Omit<Required<DeepgramTranscriberOptions>, 'apiKey'>;

type Settings = Required<DeepgramTranscriberOptions>;

export class DeepgramTranscriber implements SpeechToText {
  readonly provider = 'deepgram';
  readonly capabilities: SttCapabilities = { streaming: true, interimResults: true };
  readonly languages: readonly string[] = [];
  readonly #settings: Settings;

  constructor(options: DeepgramTranscriberOptions = {}) {
    this.#settings = { ...DEEPGRAM_DEFAULTS, apiKey: '', ...definedOnly(options) };
  }

  stream(options: SttStreamOptions): DeepgramStream {
    const s = this.#settings;
    const url = listenUrl(s.baseUrl, {
      model: s.model,
      language: options.language,
      endpointingMs: s.endpointingMs,
      utteranceEndMs: s.utteranceEndMs,
      smartFormat: s.smartFormat,
    });
    return new DeepgramStream(url, s, options.signal);
  }

  /** A whole recording through one live stream: the finals joined. Rejects with the stream's first error. */
  async transcribe(
    audio: Int16Array,
    options: SttStreamOptions,
  ): Promise<{ text: string; language?: string }> {
    const stream = this.stream(options);
    const finals: string[] = [];
    let failure: Error | undefined;
    const reading = (async () => {
      for await (const event of stream) {
        if (event.type === 'final') finals.push(event.text);
        else if (event.type === 'error') failure ??= event.error;
      }
    })();
    const chunk = 1_600; // 100 ms at 16 kHz
    for (let at = 0; at < audio.length; at += chunk) stream.push(audio.subarray(at, at + chunk));
    await stream.end();
    await reading;
    if (failure) throw failure;
    if (options.signal?.aborted) {
      throw new EngineError('transcription aborted', { engine: DEEPGRAM_STT_ENGINE, retryable: false });
    }
    return { text: finals.join(' ') };
  }
}

type Phase = 'connecting' | 'open' | 'closing' | 'closed';

/** WebSocket close code for a connection lost without a close frame. */
const ABNORMAL_CLOSE = 1006;
const NORMAL_CLOSE = 1000;
/** Once we close ourselves, how long the server may take to answer the close frame before the socket is dropped. */
const CLOSE_HANDSHAKE_MS = 1_000;

export class DeepgramStream implements SttStream {
  readonly #ws: WebSocket;
  readonly #settings: Settings;
  readonly #queue = new EventQueue<SttEvent>(() => this.#abort());
  readonly #turn = new TurnAssembler();
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.#abort();
  /** Frames sent before the socket opened, in order. */
  readonly #pending: (Buffer | string)[] = [];
  #phase: Phase = 'connecting';
  #inputClosed = false;
  #aborted = false;
  #sentSinceTick = false;
  #keepAlive: NodeJS.Timeout | undefined;
  #closeTimer: NodeJS.Timeout | undefined;
  /** The server did not close in time after CloseStream: we closed, and its last results may be lost. */
  #closeTimedOut = false;
  #refusedStatus: number | undefined;
  #socketError: Error | undefined;
  readonly #closed: Promise<void>;
  #markClosed: () => void = () => {};

  constructor(url: string, settings: Settings, signal: AbortSignal | undefined) {
    this.#settings = settings;
    this.#signal = signal;
    this.#closed = new Promise((resolve) => {
      this.#markClosed = resolve;
    });
    const headers: Record<string, string> = settings.apiKey
      ? { Authorization: `Token ${settings.apiKey}` }
      : {};
    this.#ws = new WebSocket(url, { headers, handshakeTimeout: settings.connectTimeoutMs });
    this.#ws.on('open', () => this.#opened());
    this.#ws.on('message', (data, isBinary) => {
      if (!isBinary) this.#received(data.toString());
    });
    this.#ws.on('unexpected-response', (_request, response) => {
      this.#refusedStatus = response.statusCode;
      response.resume();
      this.#ws.terminate();
    });
    this.#ws.on('error', (error) => {
      this.#socketError ??= error;
    });
    this.#ws.on('close', (code) => this.#socketClosed(code));
    if (signal?.aborted) this.#abort();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  push(frame: Int16Array): void {
    if (this.#inputClosed || frame.length === 0) return;
    // A copy: the frame's buffer is the caller's to reuse, and it may wait here until the socket opens.
    this.#send(Buffer.from(pcm16ToBytes(frame)));
  }

  flush(): void {
    if (!this.#inputClosed) this.#send(FINALIZE);
  }

  end(): Promise<void> {
    if (!this.#inputClosed) {
      this.#inputClosed = true;
      this.#send(CLOSE_STREAM);
      if (this.#phase === 'open') this.#phase = 'closing';
      this.#stopKeepAlive();
      if (this.#phase !== 'closed') {
        this.#closeTimer = setTimeout(() => this.#closeOurselves(), this.#settings.closeTimeoutMs);
      }
    }
    return this.#closed;
  }

  /** The server kept the socket past `closeTimeoutMs` after CloseStream: close it from our side. */
  #closeOurselves(): void {
    this.#closeTimedOut = true;
    if (this.#ws.readyState !== WebSocket.OPEN) {
      this.#ws.terminate();
      return;
    }
    this.#ws.close(NORMAL_CLOSE);
    this.#closeTimer = setTimeout(() => this.#ws.terminate(), CLOSE_HANDSHAKE_MS);
  }

  #send(frame: Buffer | string): void {
    if (this.#phase === 'connecting') {
      this.#pending.push(frame);
      return;
    }
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.#ws.send(frame);
    if (typeof frame !== 'string') this.#sentSinceTick = true;
  }

  #opened(): void {
    const ending = this.#inputClosed;
    this.#phase = 'open';
    for (const frame of this.#pending.splice(0)) this.#send(frame);
    if (ending) {
      this.#phase = 'closing';
      return;
    }
    this.#keepAlive = setInterval(() => {
      if (!this.#sentSinceTick && this.#ws.readyState === WebSocket.OPEN) this.#ws.send(KEEP_ALIVE);
      this.#sentSinceTick = false;
    }, this.#settings.keepAliveIntervalMs);
  }

  #received(text: string): void {
    let events: SttEvent[];
    try {
      events = this.#turn.accept(parseServerMessage(text));
    } catch (error) {
      events = [
        {
          type: 'error',
          error: failure(`malformed message from Deepgram: ${text.slice(0, 200)}`, false, error),
        },
      ];
    }
    for (const event of events) this.#queue.put(event);
  }

  #socketClosed(code: number): void {
    const wasOpen = this.#phase === 'open' || this.#phase === 'closing';
    // After CloseStream the server closes normally once its last results are sent; an abnormal close (1006:
    // the network, a crash, or our close timer) may have lost some of them, which the caller must hear about.
    const deliberate =
      this.#inputClosed && this.#phase === 'closing' && code !== ABNORMAL_CLOSE && !this.#closeTimedOut;
    this.#phase = 'closed';
    this.#stopKeepAlive();
    clearTimeout(this.#closeTimer);
    this.#signal?.removeEventListener('abort', this.#onAbort);
    if (!this.#aborted) {
      for (const event of this.#turn.finish(deliberate)) this.#queue.put(event);
      if (!deliberate) this.#queue.put({ type: 'error', error: this.#closeFailure(wasOpen, code) });
    }
    this.#queue.close();
    this.#markClosed();
  }

  #closeFailure(wasOpen: boolean, code: number): EngineError {
    const status = this.#refusedStatus;
    if (status !== undefined) {
      return failure(
        `Deepgram refused the connection with ${status}`,
        status === 429 || status >= 500,
        undefined,
        status,
      );
    }
    const detail = this.#socketError?.message ?? `close code ${code}`;
    return wasOpen
      ? failure(`Deepgram connection dropped mid-stream (${detail})`, true, this.#socketError)
      : failure(`cannot connect to Deepgram: ${detail}`, true, this.#socketError);
  }

  #stopKeepAlive(): void {
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }

  /** Nobody reads any more: no event follows, and an open socket is closed the way the protocol asks. */
  #abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#queue.discard();
    this.#stopKeepAlive();
    if (this.#phase === 'connecting') {
      this.#inputClosed = true;
      this.#ws.terminate();
    } else if (this.#phase !== 'closed') {
      void this.end();
    }
  }
}

function failure(message: string, retryable: boolean, cause?: unknown, status?: number): EngineError {
  return new EngineError(message, {
    engine: DEEPGRAM_STT_ENGINE,
    retryable,
    ...(cause === undefined ? {} : { cause }),
    ...(status === undefined ? {} : { status }),
  });
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
