/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Groq, vLLM, Ollama, llama.cpp server), streamed
 * through the official `openai` SDK.
 *
 * - Retries (429, 5xx, 408, timeouts, network failures) happen only while nothing has reached the caller: once a
 *   text delta or tool call was yielded, a failure is thrown as a non-retryable `EngineError`, because the caller
 *   may already have spoken the start of the reply.
 * - Aborting `request.signal` (or leaving the loop early) aborts the HTTP request; the iteration then ends
 *   quietly: no `done` event, nothing thrown. The same holds when the signal is already aborted.
 * - A stream that ends without a finish reason after output had started ends with `done` whose finish reason is
 *   `unknown` (usage is then usually missing); with no output yet, it is retried like a network failure.
 * - Timeouts are per attempt (first chunk, then silence between chunks); a caller that needs one deadline for
 *   the whole reply aborts its signal.
 */
import OpenAI from 'openai';
import { EngineError } from '../../errors.ts';
import type { ChatEvent, ChatRequest, LanguageModel, LlmCapabilities } from '../types.ts';
import { afterOutput, chatFailure, OPENAI_ENGINE, serverRetryDelayMs } from './openai-errors.ts';
import { chatRequestBody, type MaxTokensField, ReplyAssembler, type StreamChunk } from './openai-wire.ts';
import { pause } from './pause.ts';

export interface OpenAiChatOptions {
  /** e.g. `https://api.openai.com/v1`, `https://api.groq.com/openai/v1`, `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Empty for local servers that take no key. */
  apiKey?: string;
  model: string;
  /** From sending the request to the first stream chunk. */
  firstTokenTimeoutMs?: number;
  /** Longest silence between two chunks once the stream has started. */
  idleTimeoutMs?: number;
  /** Attempts in all, the first included. */
  maxAttempts?: number;
  /** Backoff before the second attempt; it doubles per attempt, with jitter, up to `maxRetryDelayMs`. */
  retryBaseDelayMs?: number;
  maxRetryDelayMs?: number;
  maxTokensField?: MaxTokensField;
  defaultHeaders?: Record<string, string>;
  /** Replaces the global `fetch` (a proxy agent, instrumentation). */
  fetch?: typeof fetch;
}

export const OPENAI_CHAT_DEFAULTS = {
  apiKey: '',
  // Hosted models answer in 0.2-2 s; a local server loading its model from disk can take several seconds more.
  // Past 10 s the caller has heard a long silence and a retry or a fallback line serves them better.
  firstTokenTimeoutMs: 10_000,
  // Once streaming, servers send 20-200 chunks a second; 5 s without one means the generation stalled.
  idleTimeoutMs: 5_000,
  // Three attempts with the delays below stay inside ~1.5 s of backoff, about what a caller tolerates in silence.
  maxAttempts: 3,
  retryBaseDelayMs: 250,
  // A server asking for a longer wait (Retry-After) is not worth holding a live call for longer than this.
  maxRetryDelayMs: 2_000,
  maxTokensField: 'max_tokens',
} as const satisfies Partial<OpenAiChatOptions>;

type Tuning = Required<Omit<OpenAiChatOptions, 'baseURL' | 'model' | 'defaultHeaders' | 'fetch'>>;

/** Sent when no key is configured: the SDK insists on one and local servers ignore it. */
const PLACEHOLDER_API_KEY = 'no-key';

export class OpenAiChatModel implements LanguageModel {
  readonly provider = 'openai';
  readonly model: string;
  readonly capabilities: LlmCapabilities = {
    streaming: true,
    functionCalling: true,
    choosesTools: true,
  };
  private readonly client: OpenAI;
  private readonly settings: Tuning;

  constructor(options: OpenAiChatOptions) {
    const d = OPENAI_CHAT_DEFAULTS;
    this.settings = {
      apiKey: options.apiKey ?? d.apiKey,
      firstTokenTimeoutMs: options.firstTokenTimeoutMs ?? d.firstTokenTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? d.idleTimeoutMs,
      maxAttempts: Math.max(1, options.maxAttempts ?? d.maxAttempts),
      retryBaseDelayMs: options.retryBaseDelayMs ?? d.retryBaseDelayMs,
      maxRetryDelayMs: options.maxRetryDelayMs ?? d.maxRetryDelayMs,
      maxTokensField: options.maxTokensField ?? d.maxTokensField,
    };
    this.model = options.model;
    // Every option the SDK would otherwise read from process.env is given explicitly (SDK v6 still looks at
    // OPENAI_CUSTOM_HEADERS whatever the options; nothing else).
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: this.settings.apiKey === '' ? PLACEHOLDER_API_KEY : this.settings.apiKey,
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      logLevel: 'off',
      maxRetries: 0,
      timeout: this.settings.firstTokenTimeoutMs,
      ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: options.defaultHeaders }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  async *chat(request: ChatRequest): AsyncGenerator<ChatEvent, void, undefined> {
    const { signal } = request;
    const body = chatRequestBody(this.model, request, this.settings.maxTokensField);
    let started = false;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) return;
      const exchange = new Exchange(signal, this.settings.firstTokenTimeoutMs, this.settings.idleTimeoutMs);
      try {
        const stream = await this.client.chat.completions.create(body, {
          signal: exchange.signal,
          maxRetries: 0,
        });
        const reply = new ReplyAssembler();
        // The SDK ends the iteration quietly when the request is aborted, by the caller or by our timers.
        for await (const chunk of stream) {
          exchange.chunkArrived();
          for (const event of reply.accept(chunk as StreamChunk)) {
            // Chunks already read may still be buffered after an abort: none of them reaches the caller.
            if (signal?.aborted) return;
            started = true;
            yield event;
          }
          exchange.awaitingChunk();
        }
        if (signal?.aborted) return;
        if (exchange.timedOut !== undefined) throw chatFailure(undefined, exchange.timedOut);
        if (!reply.finished && !started) {
          throw new EngineError('language model stream ended before any output', {
            engine: OPENAI_ENGINE,
            retryable: true,
          });
        }
        for (const event of reply.finish()) {
          if (signal?.aborted) return;
          yield event;
        }
        return;
      } catch (error) {
        if (signal?.aborted) return;
        const failure = chatFailure(error, exchange.timedOut);
        if (started) throw afterOutput(failure);
        if (!failure.retryable || attempt >= this.settings.maxAttempts) throw failure;
        if (!(await pause(this.retryDelayMs(attempt, failure), signal))) return;
      } finally {
        exchange.end();
      }
    }
  }

  private retryDelayMs(attempt: number, failure: EngineError): number {
    const { retryBaseDelayMs, maxRetryDelayMs } = this.settings;
    const asked = serverRetryDelayMs(failure);
    if (asked !== undefined) return Math.min(asked, maxRetryDelayMs);
    const backoff = Math.min(retryBaseDelayMs * 2 ** (attempt - 1), maxRetryDelayMs);
    // Jitter spreads the retries of many calls that hit the same rate limit at once.
    return backoff * (0.5 + Math.random() / 2);
  }
}

/**
 * One HTTP attempt: its own abort controller, tied to the caller's signal and to the two stream timers. The
 * clocks run only while we wait for the server: time the caller spends on an event (backpressure from the
 * speech side) is not the server's silence.
 */
class Exchange {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  timedOut: 'first token' | 'chunk' | undefined;

  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    firstTokenTimeoutMs: number,
    private readonly idleTimeoutMs: number,
  ) {
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => this.expire('first token'), firstTokenTimeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  chunkArrived(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  awaitingChunk(): void {
    this.timer = setTimeout(() => this.expire('chunk'), this.idleTimeoutMs);
  }

  /** Releases the timers and the listener and aborts the request if it is still open (a no-op when finished). */
  end(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }

  private readonly onCallerAbort = (): void => {
    this.controller.abort(this.callerSignal?.reason);
  };

  private expire(what: 'first token' | 'chunk'): void {
    this.timedOut = what;
    this.controller.abort();
  }
}
