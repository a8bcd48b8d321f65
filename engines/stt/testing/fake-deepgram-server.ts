/**
 * A fake Deepgram live transcription server: a real WebSocket server (`ws`) on 127.0.0.1, port 0, serving
 * `/v1/listen`. It takes binary PCM16 audio, records every text frame (KeepAlive, Finalize, CloseStream) and
 * the close code it saw, and answers in one of two ways:
 * - recognition (default): each utterance it hears by energy gets the next of `transcripts`, with Deepgram's
 *   message sequence (fake-deepgram-recognizer.ts), honouring the `endpointing` and `utterance_end_ms` query;
 *   or, with `recognizer`, whatever recognizer the test brings for each connection;
 * - scripted: `script` steps are sent when the audio received reaches their position, and `onFinalize` replies
 *   answer successive Finalize messages. Tests can also `send` any message or `drop` a connection.
 * `latencyMs` delays every message sent (order kept); `refuseWith` answers the upgrade with an HTTP status;
 * `apiKey` makes it refuse (401) a missing or wrong `Authorization: Token` header.
 * On CloseStream it does what Deepgram does: sends the results of the audio it still holds and the metadata,
 * then closes (1000).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { pcm16FromBytes } from '../../../codecs/index.ts';
import { metadataMessage } from './fake-deepgram-messages.ts';
import { FakeRecognizer } from './fake-deepgram-recognizer.ts';

type Message = Record<string, unknown>;

export interface ScriptStep {
  /** Sent once the connection has received this much audio (ms of 16 kHz PCM16). */
  afterAudioMs: number;
  messages: Message[];
}

/** What turns a connection's audio into Deepgram's messages (`FakeRecognizer` unless a test brings its own). */
export interface FakeDeepgramRecognizer {
  audio(samples: Int16Array): Message[];
  finalize(): Message[];
  close(): Message[];
}

export interface FakeDeepgramOptions {
  transcripts?: string[];
  /** A recognizer per connection, given the connection's query (`endpointing`, `utterance_end_ms`, ...). */
  recognizer?: (query: URLSearchParams) => FakeDeepgramRecognizer;
  script?: ScriptStep[];
  onFinalize?: Message[][];
  /**
   * The silence before a commit, whatever `endpointing` the client asks for: the fake answers each stretch of
   * voice with one whole transcript, so it cannot commit at a pause inside a sentence as a real Deepgram does.
   */
  endpointingMs?: number;
  latencyMs?: number;
  apiKey?: string;
  refuseWith?: number;
}

export class FakeDeepgramConnection {
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
  /** Text frames received, by `type` (`KeepAlive`, `Finalize`, `CloseStream`, ...). */
  readonly controls: string[] = [];
  audioBytes = 0;
  open = true;
  /** The close code as the server saw it: 1000 for a normal close, 1006 when the client dropped the socket. */
  closeCode: number | undefined;
  readonly #socket: WebSocket;
  readonly #latencyMs: () => number;
  #sending: Promise<void> = Promise.resolve();
  readonly #waits = new Map<NodeJS.Timeout, () => void>();

  constructor(socket: WebSocket, request: http.IncomingMessage, latencyMs: () => number) {
    this.#socket = socket;
    this.query = new URL(request.url ?? '/', 'ws://fake').searchParams;
    this.authorization = request.headers.authorization;
    this.#latencyMs = latencyMs;
  }

  get audioMs(): number {
    return this.audioBytes / 32;
  }

  /** Sends after the server's latency, in order with every other message; dropped if the socket closes first. */
  send(message: Message): Promise<void> {
    const latency = this.#latencyMs();
    this.#sending = this.#sending.then(async () => {
      if (latency > 0 && this.open) await this.#wait(latency);
      if (this.open) this.#socket.send(JSON.stringify(message));
    });
    return this.#sending;
  }

  /** The socket closed: pending latency waits end at once (nothing holds the process open). */
  closed(code: number): void {
    this.open = false;
    this.closeCode = code;
    for (const [timer, resolve] of this.#waits) {
      clearTimeout(timer);
      resolve();
    }
    this.#waits.clear();
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waits.delete(timer);
        resolve();
      }, ms);
      this.#waits.set(timer, resolve);
    });
  }

  /** Closes normally once everything queued is sent. */
  async close(): Promise<void> {
    await this.#sending;
    if (this.open) this.#socket.close(1000);
  }

  /** Cuts the connection with no close handshake, as a crashed server or a network failure does. */
  drop(): void {
    this.#socket.terminate();
  }
}

export class FakeDeepgramServer {
  readonly connections: FakeDeepgramConnection[] = [];
  latencyMs: number;
  readonly #options: FakeDeepgramOptions;
  readonly #http: http.Server;
  readonly #wss: WebSocketServer;
  #waiters: (() => void)[] = [];

  private constructor(server: http.Server, options: FakeDeepgramOptions) {
    this.#options = options;
    this.latencyMs = options.latencyMs ?? 0;
    this.#http = server;
    this.#wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (request, socket, head) => {
      const refusal = this.#refusal(request);
      if (refusal !== undefined) {
        socket.end(`HTTP/1.1 ${refusal} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        return;
      }
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#accept(ws, request));
    });
  }

  static async start(options: FakeDeepgramOptions = {}): Promise<FakeDeepgramServer> {
    const server = http.createServer((_req, res) => res.writeHead(426).end());
    const fake = new FakeDeepgramServer(server, options);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  get baseUrl(): string {
    return `ws://127.0.0.1:${(this.#http.address() as AddressInfo).port}`;
  }

  /** Connections still open. */
  get activeConnections(): number {
    return this.connections.filter((c) => c.open).length;
  }

  /** Resolves once `condition` holds; checked after every frame received and every close. */
  async until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #refusal(request: http.IncomingMessage): number | undefined {
    if (this.#options.refuseWith !== undefined) return this.#options.refuseWith;
    if (!request.url?.startsWith('/v1/listen')) return 404;
    const key = this.#options.apiKey;
    if (key !== undefined && request.headers.authorization !== `Token ${key}`) return 401;
    return undefined;
  }

  #accept(ws: WebSocket, request: http.IncomingMessage): void {
    const connection = new FakeDeepgramConnection(ws, request, () => this.latencyMs);
    this.connections.push(connection);
    const query = connection.query;
    const recognizer: FakeDeepgramRecognizer =
      this.#options.recognizer?.(query) ??
      new FakeRecognizer(
        this.#options.transcripts ?? [''],
        this.#options.endpointingMs ?? Number(query.get('endpointing') ?? 10),
        Number(query.get('utterance_end_ms') ?? 1000),
      );
    const script = [...(this.#options.script ?? [])];
    const finalizeReplies = [...(this.#options.onFinalize ?? [])];
    const scripted = this.#options.script !== undefined || this.#options.onFinalize !== undefined;
    const sendAll = (messages: Message[]): void => {
      for (const message of messages) void connection.send(message);
    };

    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        connection.audioBytes += data.length;
        if (!scripted) sendAll(recognizer.audio(pcm16FromBytes(Uint8Array.from(data))));
        while (script.length > 0 && script[0]!.afterAudioMs <= connection.audioMs)
          sendAll(script.shift()!.messages);
      } else {
        const type = controlType(data.toString());
        connection.controls.push(type);
        if (type === 'Finalize') sendAll(scripted ? (finalizeReplies.shift() ?? []) : recognizer.finalize());
        if (type === 'CloseStream') {
          if (!scripted) sendAll(recognizer.close());
          sendAll([metadataMessage(connection.audioMs / 1000)]);
          void connection.close();
        }
      }
      this.#wake();
    });
    ws.on('close', (code) => {
      connection.closed(code);
      this.#wake();
    });
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

function controlType(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    const type =
      typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
    return typeof type === 'string' ? type : `unknown:${text}`;
  } catch {
    return `not-json:${text}`;
  }
}
