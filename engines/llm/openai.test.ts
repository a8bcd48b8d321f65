/** `OpenAiChatModel` against the fake Chat Completions server: the request it sends and how it reads the stream. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { collectReply } from './collect.ts';
import { HELLO, SENTENCE, useFakeServer, WEATHER } from './testing/openai-fixtures.ts';

const fake = useFakeServer();

describe('the request it sends', () => {
  test('carries model, mapped messages, tools, streaming with usage, limits and the key', async () => {
    fake.server.set({ reply: { text: 'ok' } });
    await collectReply(
      fake.model({ maxTokensField: 'max_completion_tokens' }).chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Pune?' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Pune"}' }],
          },
          { role: 'tool', content: '31 degrees', toolCallId: 'c1' },
        ],
        functions: [WEATHER],
        temperature: 0.2,
        maxTokens: 64,
      }),
    );
    const [sent] = fake.server.requests;
    assert.equal(sent?.path, '/v1/chat/completions');
    assert.equal(sent?.headers.authorization, 'Bearer sk-test');
    const body = sent?.body;
    assert.equal(body?.model, 'fake-model');
    assert.equal(body?.stream, true);
    assert.deepEqual(body?.stream_options, { include_usage: true });
    assert.equal(body?.temperature, 0.2);
    assert.equal(body?.max_completion_tokens, 64);
    assert.equal(body?.max_tokens, undefined);
    assert.deepEqual(body?.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Pune?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Pune"}' } },
        ],
      },
      { role: 'tool', content: '31 degrees', tool_call_id: 'c1' },
    ]);
    assert.deepEqual(body?.tools, [{ type: 'function', function: WEATHER }]);
  });

  test('sends no tools field when no function is offered, and a placeholder key when none is set', async () => {
    await collectReply(fake.model({ apiKey: '' }).chat({ ...HELLO, functions: [] }));
    const [sent] = fake.server.requests;
    assert.equal('tools' in (sent?.body ?? {}), false);
    assert.equal(sent?.headers.authorization, 'Bearer no-key');
  });
});

describe('the stream it reads', () => {
  test('yields each delta as it comes, then done with the usage of the final chunk', async () => {
    fake.server.set({ reply: { text: SENTENCE, usage: { promptTokens: 11, completionTokens: 6 } } });
    const reply = await collectReply(fake.model().chat(HELLO));
    assert.deepEqual(
      reply.events.filter((e) => e.type === 'text').map((e) => e.text),
      ['One', ' two', ' three', ' four', ' five', ' six.'],
    );
    assert.deepEqual(reply.events.at(-1), {
      type: 'done',
      finishReason: 'stop',
      usage: { promptTokens: 11, completionTokens: 6 },
    });
  });

  test('reads events split across reads in the middle of a data line', async () => {
    fake.server.set({
      splitWrites: true,
      reply: { text: SENTENCE, toolCalls: [{ name: 'get_weather', arguments: '{"city":"Pune"}' }] },
    });
    const reply = await collectReply(fake.model().chat({ ...HELLO, functions: [WEATHER] }));
    assert.equal(reply.text, SENTENCE);
    assert.deepEqual(
      reply.toolCalls.map((c) => [c.name, c.arguments]),
      [['get_weather', '{"city":"Pune"}']],
    );
    assert.equal(reply.finishReason, 'tool_calls');
  });

  test('joins tool-call fragments per index and emits each call whole, in index order', async () => {
    const calls = [
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Pune","unit":"celsius"}', fragments: 7 },
      { id: 'call_b', name: 'get_weather', arguments: '{"city":"Goa"}', fragments: 4 },
    ];
    fake.server.set({ reply: { toolCalls: calls } });
    const reply = await collectReply(fake.model().chat({ ...HELLO, functions: [WEATHER] }));
    assert.deepEqual(
      reply.toolCalls,
      calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    );
    assert.deepEqual(
      reply.events.map((e) => e.type),
      ['tool_call', 'tool_call', 'done'],
    );
  });

  test('maps finish reasons', async () => {
    for (const [wire, ours] of [
      ['length', 'length'],
      ['content_filter', 'content_filter'],
      ['eos', 'unknown'],
    ]) {
      fake.server.set({ reply: { text: 'a b', finishReason: wire } });
      assert.equal((await collectReply(fake.model().chat(HELLO))).finishReason, ours);
    }
  });

  test('ends without usage when the server sends none, and accepts choices: null on the usage chunk', async () => {
    fake.server.set({ usage: false });
    assert.equal((await collectReply(fake.model().chat(HELLO))).usage, undefined);
    fake.server.set({
      usage: true,
      nullChoicesInUsageChunk: true,
      reply: { text: 'a b', usage: { promptTokens: 3, completionTokens: 2 } },
    });
    const reply = await collectReply(fake.model().chat(HELLO));
    assert.deepEqual(reply.usage, { promptTokens: 3, completionTokens: 2 });
    assert.equal(reply.text, 'a b');
  });
});
