/**
 * A real HTTP server on 127.0.0.1 (port 0) that speaks OpenAI's `POST /v1/audio/speech` with
 * `response_format: 'pcm'`: raw 24 kHz PCM16 LE mono, a tone whose length follows the input's length, sent in
 * chunks with controllable first-byte latency and throughput. It can fail the next N requests with a status,
 * cut the next N streams after some bytes, and it records every request and whether its response finished or
 * was closed early by the client (to check that an aborted synthesis does not leak a request).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_PCM_RATE = 24_000;

export interface FakeSpeechBehaviour {
  /** Delay before the headers and the first audio. */
  firstByteDelayMs: number;
  /** Bytes per write; odd sizes split samples across reads. */
  chunkBytes: number;
  /** Pace writes to this throughput; 0 sends as fast as the socket takes them. */
  bytesPerSecond: number;
  /** Audio length per character of input. */
  msPerChar: number;
  toneHz: number;
  /** Voices accepted; any other gets 400 as OpenAI answers an unknown voice. */
  voices: readonly string[];
  /** Answer the next `failCount` requests with `failStatus` and an OpenAI error body. */
  failStatus: number;
  failCount: number;
  /** Destroy the connection after this many body bytes, for the next `cutCount` requests. */
  cutAfterBytes: number;
  cutCount: number;
}

const DEFAULT_BEHAVIOUR: FakeSpeechBehaviour = {
  firstByteDelayMs: 0,
  chunkBytes: 4800,
  bytesPerSecond: 0,
  msPerChar: 60,
  toneHz: 440,
  voices: ['alloy', 'ash', 'coral', 'echo', 'nova', 'sage', 'shimmer'],
  failStatus: 503,
  failCount: 0,
  cutAfterBytes: 0,
  cutCount: 0,
};

/** Shortest audio answered, so even one character is audible. */
const MIN_AUDIO_MS = 300;
const AMPLITUDE = 8000;
/** Pause between the last bytes of a cut stream and the reset, so the client reads them before the failure. */
const CUT_SETTLE_MS = 20;

export interface RecordedSpeechRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
  status: number;
  bytesSent: number;
  /** 'open' while sending; 'finished' when the whole body went out; 'closed' when the connection ended first. */
  state: 'open' | 'finished' | 'closed';
}

/** The tone the server sends for `chars` characters of input (exported so tests can compare). */
export function fakeSpeechPcm(
  chars: number,
  behaviour: Pick<FakeSpeechBehaviour, 'msPerChar' | 'toneHz'>,
): Buffer {
  const ms = Math.max(MIN_AUDIO_MS, chars * behaviour.msPerChar);
  const samples = Math.round((FAKE_PCM_RATE * ms) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    pcm.writeInt16LE(
      Math.round(AMPLITUDE * Math.sin((2 * Math.PI * behaviour.toneHz * i) / FAKE_PCM_RATE)),
      i * 2,
    );
  }
  return pcm;
}

export class FakeOpenAiSpeechServer {
  readonly requests: RecordedSpeechRequest[] = [];
  #behaviour: FakeSpeechBehaviour;
  readonly #server: Server;
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Generated tones by input length and behaviour, so a benchmark measures the client, not the sine loop. */
  readonly #tones = new Map<string, Buffer>();

  private constructor(server: Server, behaviour: FakeSpeechBehaviour) {
    this.#server = server;
    this.#behaviour = behaviour;
  }

  static async start(behaviour: Partial<FakeSpeechBehaviour> = {}): Promise<FakeOpenAiSpeechServer> {
    // Idle connections stay open longer than any pause between tests: a suite that blocks its event loop for
    // seconds (large assertions) must not find the fake closing the keep-alive socket its client reuses.
    const server = createServer({ keepAliveTimeout: 60_000 });
    const fake = new FakeOpenAiSpeechServer(server, { ...DEFAULT_BEHAVIOUR, ...behaviour });
    server.on('request', (req, res) => void fake.#handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** API root for the SDK's `baseURL`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  get behaviour(): Readonly<FakeSpeechBehaviour> {
    return this.#behaviour;
  }

  /** Changes how the next requests are answered. */
  configure(behaviour: Partial<FakeSpeechBehaviour>): void {
    this.#behaviour = { ...this.#behaviour, ...behaviour };
  }

  /** Responses still being sent. */
  get openRequests(): number {
    return this.requests.filter((r) => r.state === 'open').length;
  }

  /** Forgets recorded requests and restores the default behaviour. */
  reset(behaviour: Partial<FakeSpeechBehaviour> = {}): void {
    this.requests.length = 0;
    this.#behaviour = { ...DEFAULT_BEHAVIOUR, ...behaviour };
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw: Buffer[] = [];
    for await (const part of req) raw.push(part as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(raw).toString('utf8')) as Record<string, unknown>;
    } catch {}
    const record: RecordedSpeechRequest = {
      path: req.url ?? '',
      authorization: req.headers.authorization,
      body,
      status: 200,
      bytesSent: 0,
      state: 'open',
    };
    this.requests.push(record);
    res.on('close', () => {
      if (record.state === 'open') record.state = res.writableFinished ? 'finished' : 'closed';
    });
    const behaviour = this.#behaviour;
    const refusal = this.#refusal(req, body, behaviour);
    if (refusal) return this.#fail(res, record, refusal.status, refusal.message);
    if (behaviour.failCount > 0) {
      this.#behaviour = { ...behaviour, failCount: behaviour.failCount - 1 };
      return this.#fail(res, record, behaviour.failStatus, 'simulated failure');
    }
    let cutAfter = 0;
    if (behaviour.cutCount > 0) {
      this.#behaviour = { ...behaviour, cutCount: behaviour.cutCount - 1 };
      cutAfter = behaviour.cutAfterBytes;
    }
    const pcm = this.#tone((body['input'] as string).length, behaviour);
    await this.#sleep(behaviour.firstByteDelayMs);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'audio/pcm' });
    for (let offset = 0; offset < pcm.length && !res.destroyed; offset += behaviour.chunkBytes) {
      let piece = pcm.subarray(offset, offset + behaviour.chunkBytes);
      if (cutAfter > 0 && offset + piece.length >= cutAfter) {
        piece = piece.subarray(0, cutAfter - offset);
        res.write(piece);
        record.bytesSent += piece.length;
        await this.#sleep(CUT_SETTLE_MS);
        res.socket?.destroy();
        return;
      }
      const more = res.write(piece);
      record.bytesSent += piece.length;
      if (behaviour.bytesPerSecond > 0) await this.#sleep((piece.length / behaviour.bytesPerSecond) * 1000);
      else if (!more) await drainOrClose(res);
    }
    if (!res.destroyed) res.end();
  }

  #refusal(
    req: IncomingMessage,
    body: Record<string, unknown>,
    behaviour: FakeSpeechBehaviour,
  ): { status: number; message: string } | undefined {
    if (req.method !== 'POST' || !req.url?.endsWith('/v1/audio/speech'))
      return { status: 404, message: 'not found' };
    const { input, voice, model, response_format: format, speed } = body;
    if (typeof model !== 'string' || model === '') return { status: 400, message: 'model is required' };
    if (typeof input !== 'string' || input.length === 0 || input.length > 4096) {
      return { status: 400, message: 'input must be 1-4096 characters' };
    }
    if (typeof voice !== 'string' || !behaviour.voices.includes(voice)) {
      return { status: 400, message: `unknown voice '${String(voice)}'` };
    }
    if (format !== 'pcm') return { status: 400, message: 'this fake only answers response_format pcm' };
    if (speed !== undefined && !(typeof speed === 'number' && speed >= 0.25 && speed <= 4)) {
      return { status: 400, message: 'speed must be within 0.25-4' };
    }
    return undefined;
  }

  #tone(chars: number, behaviour: FakeSpeechBehaviour): Buffer {
    const key = `${chars}/${behaviour.msPerChar}/${behaviour.toneHz}`;
    let pcm = this.#tones.get(key);
    if (!pcm) {
      pcm = fakeSpeechPcm(chars, behaviour);
      this.#tones.set(key, pcm);
    }
    return pcm;
  }

  #fail(res: ServerResponse, record: RecordedSpeechRequest, status: number, message: string): void {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
  }

  #sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}
