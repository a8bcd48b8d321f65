/**
 * A fake OpenAI-compatible transcription server: real HTTP on 127.0.0.1, port 0. `POST .../audio/transcriptions`
 * takes the multipart form the SDK sends (parsed by the platform's own `Request.formData()`), checks that `file`
 * is a 16-bit PCM mono WAV with a well-formed header, records the request and answers `{"text": ...}`.
 *
 * Replies are scripted: queued with `reply()` and used in order, then `text` (a string, or a function of the
 * request) for the rest. A reply can also be an error status, a stall (no answer until the client gives up) or
 * a hang-up (the connection is destroyed). `latencyMs` delays every answer.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readWav } from '../../../codecs/index.ts';

export interface RecordedTranscription {
  authorization: string | undefined;
  model: string | undefined;
  language: string | undefined;
  prompt: string | undefined;
  responseFormat: string | undefined;
  fileName: string | undefined;
  fileType: string | undefined;
  /** From the WAV header as sent. */
  wav: { format: number; channels: number; sampleRate: number; bitsPerSample: number } | undefined;
  /** The decoded audio (first channel), when the WAV was valid. */
  audio: Int16Array | undefined;
  /** Why the upload was refused (400), if it was. */
  problem: string | undefined;
}

export type FakeTranscriptionReply =
  | { text: string }
  | { status: number; message?: string }
  | { stall: true }
  | { hangUp: true };

export interface FakeTranscriptionServerOptions {
  text?: string | ((request: RecordedTranscription, index: number) => string);
  latencyMs?: number;
}

export class FakeOpenAiTranscriptionServer {
  readonly requests: RecordedTranscription[] = [];
  text: string | ((request: RecordedTranscription, index: number) => string);
  latencyMs: number;
  readonly #replies: FakeTranscriptionReply[] = [];
  readonly #server: http.Server;
  #inFlight = 0;
  #idleWaiters: (() => void)[] = [];

  private constructor(server: http.Server, options: FakeTranscriptionServerOptions) {
    this.#server = server;
    this.text = options.text ?? '';
    this.latencyMs = options.latencyMs ?? 0;
  }

  static async start(options: FakeTranscriptionServerOptions = {}): Promise<FakeOpenAiTranscriptionServer> {
    // Keep-alive outlasts a suite's pauses, so a client never reuses a socket the fake is closing.
    const server = http.createServer({ keepAliveTimeout: 60_000 });
    const fake = new FakeOpenAiTranscriptionServer(server, options);
    server.on('request', (req, res) => void fake.#handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  /** API root including `/v1`, for the SDK's `baseURL`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Requests received and not yet answered or abandoned. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Queues replies for the next requests, in order. */
  reply(...replies: FakeTranscriptionReply[]): void {
    this.#replies.push(...replies);
  }

  /** Resolves once no request is in flight. */
  async idle(): Promise<void> {
    if (this.#inFlight === 0) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/audio/transcriptions')) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      return;
    }
    this.#inFlight++;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (--this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    };
    res.on('close', settle);
    const recorded = await parseUpload(req);
    const index = this.requests.push(recorded) - 1;
    if (recorded.problem !== undefined) {
      sendJson(res, 400, { error: { message: recorded.problem, type: 'invalid_request_error' } });
      return;
    }
    const reply = this.#replies.shift() ?? { text: this.#textFor(recorded, index) };
    if (this.latencyMs > 0) await delay(this.latencyMs);
    if (res.destroyed) return;
    if ('stall' in reply) return;
    if ('hangUp' in reply) {
      req.socket.destroy();
      return;
    }
    if ('status' in reply) {
      sendJson(res, reply.status, { error: { message: reply.message ?? `scripted ${reply.status}` } });
      return;
    }
    sendJson(res, 200, { text: reply.text });
  }

  #textFor(request: RecordedTranscription, index: number): string {
    return typeof this.text === 'function' ? this.text(request, index) : this.text;
  }
}

async function parseUpload(req: http.IncomingMessage): Promise<RecordedTranscription> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  const recorded: RecordedTranscription = {
    authorization: req.headers.authorization,
    model: undefined,
    language: undefined,
    prompt: undefined,
    responseFormat: undefined,
    fileName: undefined,
    fileType: undefined,
    wav: undefined,
    audio: undefined,
    problem: undefined,
  };
  let form: FormData;
  try {
    form = await new Request('http://fake/upload', {
      method: 'POST',
      headers,
      body: Buffer.concat(chunks),
    }).formData();
  } catch (error) {
    recorded.problem = `not a multipart form: ${(error as Error).message}`;
    return recorded;
  }
  const field = (name: string): string | undefined => {
    const value = form.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  recorded.model = field('model');
  recorded.language = field('language');
  recorded.prompt = field('prompt');
  recorded.responseFormat = field('response_format');
  const file = form.get('file');
  if (file === null || typeof file === 'string') {
    recorded.problem = 'file is required';
    return recorded;
  }
  recorded.fileName = file.name;
  recorded.fileType = file.type;
  const bytes = new Uint8Array(await file.arrayBuffer());
  recorded.wav = wavHeader(bytes);
  if (!recorded.model) recorded.problem = 'model is required';
  else if (!recorded.wav) recorded.problem = 'file is not a RIFF/WAVE file';
  else if (recorded.wav.format !== 1 || recorded.wav.bitsPerSample !== 16 || recorded.wav.channels !== 1) {
    recorded.problem = 'expected 16-bit PCM mono';
  } else {
    recorded.audio = readWav(bytes).channels[0];
  }
  return recorded;
}

/** The fmt chunk of a RIFF/WAVE file, read by hand so that the check does not depend on our own WAV code. */
function wavHeader(bytes: Uint8Array): RecordedTranscription['wav'] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 44 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return undefined;
  if (view.getUint32(4, true) !== bytes.length - 8) return undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ' && size >= 16) {
      return {
        format: view.getUint16(at + 8, true),
        channels: view.getUint16(at + 10, true),
        sampleRate: view.getUint32(at + 12, true),
        bitsPerSample: view.getUint16(at + 22, true),
      };
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Unreferenced: a pending answer must not keep a finished test process alive (the socket does while open). */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
