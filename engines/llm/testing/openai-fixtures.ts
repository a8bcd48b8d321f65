/** What the OpenAI provider tests share: a fake server per test file, models pointed at it, failure helpers. */
import assert from 'node:assert/strict';
import { after, afterEach, before } from 'node:test';
import { isEngineError } from '../../errors.ts';
import { OpenAiChatModel, type OpenAiChatOptions } from '../providers/openai.ts';
import type { ChatEvent, ChatRequest, FunctionSpec } from '../types.ts';
import { FakeOpenAiServer } from './fake-openai-server.ts';

export const HELLO: ChatRequest = { messages: [{ role: 'user', content: 'hello' }] };
export const SENTENCE = 'One two three four five six.';
export const WEATHER: FunctionSpec = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
};

export interface FakeServerFixture {
  readonly server: FakeOpenAiServer;
  model(options?: Partial<OpenAiChatOptions>): OpenAiChatModel;
  /** Retry delays of 1 ms keep the tests quick; the backoff rule itself is the same. */
  quick(options?: Partial<OpenAiChatOptions>): OpenAiChatModel;
}

/** Starts one fake server for the calling test file, resets it after each test and closes it at the end. */
export function useFakeServer(): FakeServerFixture {
  let server: FakeOpenAiServer | undefined;
  before(async () => {
    server = await FakeOpenAiServer.start();
  });
  afterEach(() => server?.reset());
  after(() => server?.close());
  const fixture: FakeServerFixture = {
    get server(): FakeOpenAiServer {
      if (server === undefined) throw new Error('the fake server starts in before()');
      return server;
    },
    model: (options = {}) =>
      new OpenAiChatModel({
        baseURL: fixture.server.baseURL,
        apiKey: 'sk-test',
        model: 'fake-model',
        ...options,
      }),
    quick: (options = {}) => fixture.model({ retryBaseDelayMs: 1, maxRetryDelayMs: 1, ...options }),
  };
  return fixture;
}

/** Collects what was streamed before the failure, and the failure. */
export async function untilFailure(
  events: AsyncIterable<ChatEvent>,
): Promise<{ seen: ChatEvent[]; error: unknown }> {
  const seen: ChatEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return { seen, error };
  }
  return { seen, error: undefined };
}

export function assertEngineError(error: unknown, retryable: boolean, status?: number): void {
  assert.ok(isEngineError(error), `expected an EngineError, got ${String(error)}`);
  assert.equal(error.retryable, retryable);
  if (status !== undefined) assert.equal(error.options.status, status);
}
