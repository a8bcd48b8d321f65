/**
 * A real HTTP server on 127.0.0.1 (port 0) speaking the OpenAI Chat Completions protocol: SSE when the request
 * asks for `stream: true`, one JSON completion otherwise. Tests script its replies, pacing and failures and read
 * back every request body it received.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as wait } from 'node:timers/promises';
import {
  completion,
  contentChunks,
  type FakeReply,
  finishChunk,
  usageChunk,
  type WireChunk,
} from './fake-openai-chunks.ts';

export type { FakeReply, FakeToolCall } from './fake-openai-chunks.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined when it was not JSON). */
  body: ChatBody | undefined;
}

/** The request fields tests look at; the rest stays in the object as sent. */
export interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: Array<{ role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [field: string]: unknown;
}

export interface FakeBehaviour {
  /** Wait before the first chunk (headers go out at once). */
  firstTokenLatencyMs: number;
  /** Pace of the chunks after the first; 0 sends them back to back. */
  tokensPerSecond: number;
  /** The reply, or a function of the request body and its 0-based number. */
  reply: FakeReply | ((body: ChatBody, requestNumber: number) => FakeReply);
  /** Send the usage chunk when the request asks for it. */
  usage: boolean;
  /** The final usage chunk carries `choices: null` instead of `[]` (some servers do). */
  nullChoicesInUsageChunk: boolean;
  /** Answer the first `count` chat requests with this status and an OpenAI error body. */
  failFirst: { count: number; status: number; retryAfterMs?: number };
  /** Stop after this many `data:` lines, by ending the response cleanly or by resetting the connection. */
  cutAfterChunks?: number;
  cutBy: 'end' | 'reset';
  /** Send a line that is not JSON after this many `data:` lines. */
  malformedAfterChunks?: number;
  /** Go silent (connection open) after this many `data:` lines. */
  stallAfterChunks?: number;
  /** Cut, malformed line and stall apply to the first N chat requests only (default: all of them). */
  streamFaultsFor?: number;
  /** Write each SSE event in four pieces with pauses, splitting inside the `data:` line and between its newlines. */
  splitWrites: boolean;
}

export const DEFAULT_FAKE_BEHAVIOUR: FakeBehaviour = {
  firstTokenLatencyMs: 0,
  tokensPerSecond: 0,
  reply: { text: 'Hello from the fake model.' },
  usage: true,
  nullChoicesInUsageChunk: false,
  failFirst: { count: 0, status: 500 },
  cutBy: 'end',
  splitWrites: false,
};

/** Far longer than a loopback client takes to read what was sent before the reset. */
const RESET_GRACE_MS = 50;

/** Long enough for the client to read a split write as two reads, short enough not to slow the tests. */
const SPLIT_WRITE_PAUSE_MS = 2;

export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  behaviour: FakeBehaviour;
  private chatRequests = 0;
  private open = 0;

  private constructor(
    private readonly server: Server,
    behaviour: Partial<FakeBehaviour>,
  ) {
    this.behaviour = { ...DEFAULT_FAKE_BEHAVIOUR, ...behaviour };
  }

  static async start(behaviour: Partial<FakeBehaviour> = {}): Promise<FakeOpenAiServer> {
    // Keep-alive outlasts a suite's pauses, so a client never reuses a socket the fake is closing.
    const server = createServer({ noDelay: true, keepAliveTimeout: 60_000 });
    const fake = new FakeOpenAiServer(server, behaviour);
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL clients are given, e.g. `http://127.0.0.1:40123/v1`. */
  get baseURL(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  /** Requests whose response is still open (streams in progress, or abandoned but not yet closed). */
  get openRequests(): number {
    return this.open;
  }

  /** Changes part of the behaviour for the following requests. */
  set(behaviour: Partial<FakeBehaviour>): void {
    this.behaviour = { ...this.behaviour, ...behaviour };
  }

  /** Resets behaviour, counters and recorded requests. */
  reset(behaviour: Partial<FakeBehaviour> = {}): void {
    this.behaviour = { ...DEFAULT_FAKE_BEHAVIOUR, ...behaviour };
    this.requests.length = 0;
    this.chatRequests = 0;
  }

  /** Waits until no response is open; false if some still are after `withinMs`. */
  async settled(withinMs = 2_000): Promise<boolean> {
    const deadline = Date.now() + withinMs;
    while (this.open > 0 && Date.now() < deadline) await wait(5);
    return this.open === 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.open++;
    res.on('close', () => this.open--);
    const raw = await readBody(req);
    const body = parseJson(raw);
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      return json(res, 200, {
        object: 'list',
        data: [{ id: 'fake-model', object: 'model', owned_by: 'fake' }],
      });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return json(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
    }
    if (body === undefined || !Array.isArray(body.messages)) {
      return json(res, 400, { error: { message: 'messages is required', type: 'invalid_request_error' } });
    }
    const number = this.chatRequests++;
    const { failFirst } = this.behaviour;
    if (number < failFirst.count) {
      if (failFirst.retryAfterMs !== undefined)
        res.setHeader('retry-after-ms', String(failFirst.retryAfterMs));
      return json(res, failFirst.status, {
        error: { message: `scripted failure ${failFirst.status}`, type: 'server_error', code: null },
      });
    }
    const reply =
      typeof this.behaviour.reply === 'function' ? this.behaviour.reply(body, number) : this.behaviour.reply;
    const model = body.model ?? 'fake-model';
    const id = `chatcmpl-${randomUUID()}`;
    const promptText = (body.messages ?? []).map((m) => m.content ?? '').join(' ');
    if (body.stream !== true) return json(res, 200, completion(reply, model, id, promptText));
    const faulty = number < (this.behaviour.streamFaultsFor ?? Number.POSITIVE_INFINITY);
    await this.stream(res, reply, body, { model, id, promptText, faulty });
  }

  private async stream(
    res: ServerResponse,
    reply: FakeReply,
    body: ChatBody,
    { model, id, promptText, faulty }: { model: string; id: string; promptText: string; faulty: boolean },
  ): Promise<void> {
    const b = faulty
      ? this.behaviour
      : {
          ...this.behaviour,
          cutAfterChunks: undefined,
          malformedAfterChunks: undefined,
          stallAfterChunks: undefined,
        };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const lines: Array<WireChunk | string> = contentChunks(reply, model, id);
    const finish = finishChunk(reply, model, id);
    if (finish !== undefined) lines.push(finish);
    if (b.usage && body.stream_options?.include_usage === true) {
      lines.push(usageChunk(reply, model, id, promptText, b.nullChoicesInUsageChunk));
    }
    lines.push('[DONE]');
    if (b.malformedAfterChunks !== undefined)
      lines.splice(b.malformedAfterChunks, 0, '{"choices": [{"delta": {');
    const firstDelay = reply.firstTokenLatencyMs ?? b.firstTokenLatencyMs;
    const pace = reply.tokensPerSecond ?? b.tokensPerSecond;
    if (!(await this.pace(res, firstDelay))) return;
    for (const [sent, line] of lines.entries()) {
      if (sent === b.cutAfterChunks) return this.cut(res, b.cutBy);
      if (sent === b.stallAfterChunks) return;
      if (sent > 0 && !(await this.pace(res, pace > 0 ? 1000 / pace : 0))) return;
      const event = `data: ${typeof line === 'string' ? line : JSON.stringify(line)}\n\n`;
      if (!(await this.write(res, event))) return;
    }
    res.end();
  }

  private async pace(res: ServerResponse, ms: number): Promise<boolean> {
    if (ms > 0) await wait(ms);
    return !res.destroyed;
  }

  private async write(res: ServerResponse, event: string): Promise<boolean> {
    if (res.destroyed) return false;
    if (!this.behaviour.splitWrites) {
      res.write(event);
      return true;
    }
    // "da" | "ta: {...half of the JSON" | "...rest}\n" | "\n"
    const middle = Math.floor(event.length / 2);
    for (const part of [
      event.slice(0, 2),
      event.slice(2, middle),
      event.slice(middle, -1),
      event.slice(-1),
    ]) {
      if (res.destroyed) return false;
      res.write(part);
      await wait(SPLIT_WRITE_PAUSE_MS);
    }
    return true;
  }

  private async cut(res: ServerResponse, by: FakeBehaviour['cutBy']): Promise<void> {
    if (by === 'end') return void res.end();
    // A reset makes the receiving kernel drop what the client has not read yet: let it read first.
    await wait(RESET_GRACE_MS);
    res.socket?.resetAndDestroy();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(raw: string): ChatBody | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as ChatBody)
      : undefined;
  } catch {
    return undefined;
  }
}

function json(res: ServerResponse, status: number, value: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}
