/** Every language model provider passes the shared conformance suite; plus the factory. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLanguageModel, firstMessageLine, OpenAiChatModel, ScriptedDialogModel } from './index.ts';
import { OpenAiChatModel as DirectOpenAiChatModel } from './providers/openai.ts';
import { type ConformanceSubject, languageModelConformance } from './testing/conformance.ts';
import { type ChatBody, FakeOpenAiServer, type FakeReply } from './testing/fake-openai-server.ts';
import type { ChatRequest, FunctionSpec } from './types.ts';

const BOOKING_FUNCTIONS: FunctionSpec[] = [
  {
    name: 'book_appointment',
    description: 'The caller wants to book an appointment',
    parameters: {
      type: 'object',
      properties: { date: { type: 'string' }, party_size: { type: 'integer' } },
      required: ['date'],
    },
  },
  {
    name: 'not_interested',
    description: 'The caller is not interested',
    parameters: { type: 'object', properties: {} },
  },
];

const GREETING = 'Namaste, this is Asha from City Clinic.';
const LONG_TEXT = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

function conversation(said: string, functions?: FunctionSpec[]): ChatRequest {
  return {
    messages: [
      { role: 'system', content: 'Ask the caller what they need. Be brief.' },
      { role: 'assistant', content: GREETING },
      { role: 'user', content: said },
    ],
    ...(functions === undefined ? {} : { functions }),
  };
}

function fakeReply(body: ChatBody): FakeReply {
  const tools = body.tools ?? [];
  if (tools.length > 0) {
    return {
      toolCalls: [{ name: tools[0]!.function.name, arguments: '{"date":"tomorrow","party_size":2}' }],
    };
  }
  const last = body.messages?.at(-1)?.content ?? '';
  // 10 words a second: the whole reply takes 4 s, longer than `settled` waits, so a request left open shows.
  if (last.includes('long story')) return { text: LONG_TEXT, tokensPerSecond: 10 };
  return { text: 'Hello from the fake model.' };
}

languageModelConformance('openai (fake server)', async (): Promise<ConformanceSubject> => {
  const server = await FakeOpenAiServer.start({ reply: fakeReply });
  return {
    model: new OpenAiChatModel({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'fake-model' }),
    textRequest: () => conversation('hello'),
    expectedText: 'Hello from the fake model.',
    toolCallRequest: () => conversation('book for tomorrow', BOOKING_FUNCTIONS),
    slowTextRequest: () => conversation('tell me a long story'),
    settled: () => server.settled(),
    close: () => server.close(),
  };
});

languageModelConformance('scripted', async (): Promise<ConformanceSubject> => {
  const greetingRequest = (greeting: string): ChatRequest => ({
    messages: [{ role: 'system', content: `You are Asha.\n${firstMessageLine(greeting)}` }],
  });
  return {
    // 2 ms a word: the long greeting takes ~80 ms, enough to abort midway.
    model: new ScriptedDialogModel({ tokenDelayMs: 2 }),
    textRequest: () => greetingRequest(GREETING),
    expectedText: GREETING,
    toolCallRequest: () =>
      conversation('I would like to book an appointment for tomorrow', BOOKING_FUNCTIONS),
    slowTextRequest: () => greetingRequest(LONG_TEXT),
    close: async () => {},
  };
});

test('createLanguageModel builds the provider the configuration names', () => {
  const openai = createLanguageModel({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'm' });
  assert.ok(openai instanceof DirectOpenAiChatModel);
  assert.equal(openai.provider, 'openai');
  assert.equal(openai.model, 'm');
  const scripted = createLanguageModel({ provider: 'scripted', tokenDelayMs: 5 });
  assert.ok(scripted instanceof ScriptedDialogModel);
  assert.equal(scripted.provider, 'scripted');
});
