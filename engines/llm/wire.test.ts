/**
 * The Chat Completions wire pieces on their own: chunk assembly (fragments, missing indexes, cut streams), SSE
 * decoding with reads ending anywhere, error classification, and the fake server's non-streaming answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { chatFailure, isRetryableStatus, serverRetryDelayMs } from './providers/openai-errors.ts';
import { ReplyAssembler, type StreamChunk } from './providers/openai-wire.ts';
import { FakeOpenAiServer } from './testing/fake-openai-server.ts';
import { plainFetchChunks } from './testing/plain-fetch-chat.ts';
import { SseDataDecoder } from './testing/sse-decoder.ts';
import type { ChatEvent } from './types.ts';

/** Every client option the SDK would otherwise read from process.env. */
const NO_ENVIRONMENT = {
  adminAPIKey: null,
  organization: null,
  project: null,
  webhookSecret: null,
  logLevel: 'off',
} as const;

const delta = (
  d: NonNullable<NonNullable<StreamChunk['choices']>[number]['delta']>,
  finish?: string,
): StreamChunk => ({
  choices: [{ index: 0, delta: d, finish_reason: finish ?? null }],
});

function assemble(chunks: StreamChunk[]): ChatEvent[] {
  const reply = new ReplyAssembler();
  return [...chunks.flatMap((chunk) => reply.accept(chunk)), ...reply.finish()];
}

describe('ReplyAssembler', () => {
  test('emits tool calls at the finish reason, before the usage chunk arrives', () => {
    const reply = new ReplyAssembler();
    reply.accept(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '' } }] }));
    reply.accept(delta({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    reply.accept(delta({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    assert.deepEqual(reply.accept(delta({}, 'tool_calls')), [
      { type: 'tool_call', call: { id: 'c1', name: 'f', arguments: '{"a":1}' } },
    ]);
    assert.deepEqual(reply.accept({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }), []);
    assert.deepEqual(reply.finish(), [
      { type: 'done', finishReason: 'tool_calls', usage: { promptTokens: 5, completionTokens: 2 } },
    ]);
  });

  test('joins fragments without an index (some Ollama versions) by id, and fills in missing ids and arguments', () => {
    const events = assemble([
      delta({ tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{"q":' } }] }),
      delta({ tool_calls: [{ function: { arguments: '"a"}' } }] }),
      delta({ tool_calls: [{ id: 'y', function: { name: 'g', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 2, function: { name: 'h' } }] }, 'tool_calls'),
    ]);
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
    assert.deepEqual(calls.slice(0, 2), [
      { id: 'x', name: 'f', arguments: '{"q":"a"}' },
      { id: 'y', name: 'g', arguments: '{}' },
    ]);
    assert.equal(calls[2]?.name, 'h');
    assert.match(calls[2]?.id ?? '', /^call_[0-9a-f]{32}$/);
  });

  test('a cut stream keeps only tool calls whose arguments form a JSON object, and finishes unknown', () => {
    const events = assemble([
      delta({ content: 'Hi' }),
      delta({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":1}' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{"y":' } }] }),
    ]);
    assert.deepEqual(events, [
      { type: 'text', text: 'Hi' },
      { type: 'tool_call', call: { id: 'a', name: 'f', arguments: '{"x":1}' } },
      { type: 'done', finishReason: 'unknown' },
    ]);
  });

  test('ignores other choices, empty content and choices: null', () => {
    const events = assemble([
      { choices: [{ index: 1, delta: { content: 'other' } }] },
      delta({ content: '' }),
      delta({ content: 'mine' }, 'stop'),
      { choices: null, usage: null },
    ]);
    assert.deepEqual(events, [
      { type: 'text', text: 'mine' },
      { type: 'done', finishReason: 'stop' },
    ]);
  });
});

describe('SseDataDecoder', () => {
  const stream =
    'data: {"a":1}\n\n: comment\r\ndata: {"b":"é✓"}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\ndata:[DONE]\n\n';
  const expected = ['{"a":1}', '{"b":"é✓"}', 'line1\nline2', '[DONE]'];

  test('yields the same events however the bytes are split into reads', () => {
    const bytes = new TextEncoder().encode(stream);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }),
        (cuts) => {
          const decoder = new SseDataDecoder();
          const out: string[] = [];
          let from = 0;
          for (const at of [...cuts].sort((a, b) => a - b)) {
            out.push(...decoder.push(bytes.slice(from, at)));
            from = at;
          }
          out.push(...decoder.push(bytes.slice(from)), ...decoder.end());
          assert.deepEqual(out, expected);
        },
      ),
    );
  });

  test('a last event without its blank line still counts at the end', () => {
    const decoder = new SseDataDecoder();
    assert.deepEqual(decoder.push(new TextEncoder().encode('data: tail')), []);
    assert.deepEqual(decoder.end(), ['tail']);
  });
});

describe('error classification', () => {
  test('retryable: 408, 429 and 5xx; not: other 4xx', () => {
    assert.deepEqual([400, 401, 404, 408, 422, 429, 500, 502, 503].map(isRetryableStatus), [
      false,
      false,
      false,
      true,
      false,
      true,
      true,
      true,
      true,
    ]);
  });

  test('maps SDK failures and reads the server-requested wait', () => {
    const headers = new Headers({ 'retry-after': '2' });
    const limited = chatFailure(
      APIError.generate(429, { message: 'slow down' }, undefined, headers),
      undefined,
    );
    assert.equal(limited.retryable, true);
    assert.equal(limited.options.status, 429);
    assert.equal(serverRetryDelayMs(limited), 2000);
    assert.equal(chatFailure(new APIConnectionError({ message: 'refused' }), undefined).retryable, true);
    assert.equal(chatFailure(new SyntaxError('bad json'), undefined).retryable, false);
    assert.equal(chatFailure(new TypeError('terminated'), undefined).retryable, true);
    assert.equal(chatFailure(new Error('aborted'), 'first token').retryable, true);
  });
});

describe('FakeOpenAiServer', () => {
  test('answers non-streaming requests with one JSON completion', async () => {
    const server = await FakeOpenAiServer.start({
      reply: { text: 'Namaste.', toolCalls: [{ id: 'c9', name: 'f', arguments: '{"k":"v"}' }] },
    });
    try {
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', ...NO_ENVIRONMENT });
      const answer = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(answer.choices[0]?.message.content, 'Namaste.');
      assert.deepEqual(answer.choices[0]?.message.tool_calls, [
        { id: 'c9', type: 'function', function: { name: 'f', arguments: '{"k":"v"}' } },
      ]);
      assert.equal(answer.choices[0]?.finish_reason, 'tool_calls');
      assert.equal(server.requests[0]?.body?.stream, undefined);
    } finally {
      await server.close();
    }
  });

  test('streams to a plain fetch client reading split writes, and answers unknown paths with 404', async () => {
    const server = await FakeOpenAiServer.start({ splitWrites: true, reply: { text: 'a b c' } });
    try {
      const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] };
      let text = '';
      for await (const chunk of plainFetchChunks(server.baseURL, 'k', body)) {
        text += chunk.choices?.[0]?.delta?.content ?? '';
      }
      assert.equal(text, 'a b c');
      assert.equal((await fetch(`${server.baseURL}/nothing`)).status, 404);
    } finally {
      await server.close();
    }
  });
});
