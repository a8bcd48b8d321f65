/**
 * `OpenAiChatModel` failures against the fake server: retries before the first output only, what is final, cut
 * and stalled streams, timeouts, and aborts during the backoff.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { collectReply } from './collect.ts';
import { FakeOpenAiServer, type FakeReply } from './testing/fake-openai-server.ts';
import {
  assertEngineError,
  HELLO,
  SENTENCE,
  untilFailure,
  useFakeServer,
  WEATHER,
} from './testing/openai-fixtures.ts';

const fake = useFakeServer();

describe('retries and failures', () => {
  for (const status of [429, 500, 503]) {
    test(`retries ${status} before the first token, then streams normally`, async () => {
      fake.server.set({ failFirst: { count: 2, status }, reply: { text: SENTENCE } });
      const reply = await collectReply(fake.quick().chat(HELLO));
      assert.equal(reply.text, SENTENCE);
      assert.equal(fake.server.requests.length, 3);
    });
  }

  test('gives up after maxAttempts with a retryable EngineError carrying the status', async () => {
    fake.server.set({ failFirst: { count: 10, status: 503 } });
    const { seen, error } = await untilFailure(fake.quick({ maxAttempts: 3 }).chat(HELLO));
    assert.deepEqual(seen, []);
    assertEngineError(error, true, 503);
    assert.equal(fake.server.requests.length, 3);
  });

  test('does not retry a 400', async () => {
    fake.server.set({ failFirst: { count: 1, status: 400 } });
    const { error } = await untilFailure(fake.quick().chat(HELLO));
    assertEngineError(error, false, 400);
    assert.equal(fake.server.requests.length, 1);
  });

  test('never retries once text was yielded: a reset after the first words is a final error', async () => {
    fake.server.set({ reply: { text: SENTENCE }, cutAfterChunks: 3, cutBy: 'reset' });
    const { seen, error } = await untilFailure(fake.quick().chat(HELLO));
    assert.deepEqual(
      seen.map((e) => e.type === 'text' && e.text),
      ['One', ' two'],
    );
    assertEngineError(error, false);
    assert.equal(fake.server.requests.length, 1);
  });

  test('a stream cut cleanly after the first words ends with done(unknown) and no usage', async () => {
    fake.server.set({ reply: { text: SENTENCE }, cutAfterChunks: 3, cutBy: 'end' });
    const reply = await collectReply(fake.quick().chat(HELLO));
    assert.equal(reply.text, 'One two');
    assert.deepEqual(reply.events.at(-1), { type: 'done', finishReason: 'unknown' });
    assert.equal(fake.server.requests.length, 1);
  });

  for (const cutBy of ['end', 'reset'] as const) {
    test(`a stream cut (${cutBy}) before any output is retried`, async () => {
      fake.server.set({ reply: { text: SENTENCE }, cutAfterChunks: 1, cutBy, streamFaultsFor: 1 });
      const reply = await collectReply(fake.quick().chat(HELLO));
      assert.equal(reply.text, SENTENCE);
      assert.equal(fake.server.requests.length, 2);
    });
  }

  test('a cut stream never emits a half-sent tool call', async () => {
    const reply: FakeReply = {
      text: 'Checking.',
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Pune"}', fragments: 4 }],
    };
    fake.server.set({ reply, cutAfterChunks: 5 });
    const collected = await collectReply(fake.quick().chat({ ...HELLO, functions: [WEATHER] }));
    assert.equal(collected.text, 'Checking.');
    assert.deepEqual(collected.toolCalls, []);
    assert.equal(collected.finishReason, 'unknown');
  });

  test('a malformed line is a non-retryable EngineError', async () => {
    fake.server.set({ malformedAfterChunks: 1 });
    const { error } = await untilFailure(fake.quick().chat(HELLO));
    assertEngineError(error, false);
    assert.equal(fake.server.requests.length, 1);
  });

  test('no first chunk within firstTokenTimeoutMs: retried, then a retryable timeout; requests closed', async () => {
    fake.server.set({ firstTokenLatencyMs: 1_000 });
    const { error } = await untilFailure(fake.quick({ firstTokenTimeoutMs: 50, maxAttempts: 2 }).chat(HELLO));
    assertEngineError(error, true);
    assert.equal(fake.server.requests.length, 2);
    assert.equal(await fake.server.settled(), true);
  });

  test('a stall after the first words is a final error once idleTimeoutMs passes', async () => {
    fake.server.set({ reply: { text: SENTENCE }, stallAfterChunks: 3 });
    const { seen, error } = await untilFailure(fake.quick({ idleTimeoutMs: 50 }).chat(HELLO));
    assert.equal(seen.length, 2);
    assertEngineError(error, false);
    assert.equal(fake.server.requests.length, 1);
    assert.equal(await fake.server.settled(), true);
  });

  test('a caller slower than idleTimeoutMs is not mistaken for a stalled server', async () => {
    fake.server.set({ reply: { text: 'a b c' } });
    const texts: string[] = [];
    for await (const event of fake.quick({ idleTimeoutMs: 20 }).chat(HELLO)) {
      if (event.type === 'text') texts.push(event.text);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    assert.deepEqual(texts, ['a', ' b', ' c']);
  });

  test('a stall before any output is retried', async () => {
    fake.server.set({ reply: { text: SENTENCE }, stallAfterChunks: 1, streamFaultsFor: 1 });
    const reply = await collectReply(fake.quick({ idleTimeoutMs: 50 }).chat(HELLO));
    assert.equal(reply.text, SENTENCE);
    assert.equal(fake.server.requests.length, 2);
  });

  test('an unreachable server is a retryable EngineError after every attempt', async () => {
    const gone = await FakeOpenAiServer.start();
    const baseURL = gone.baseURL;
    await gone.close();
    const { error } = await untilFailure(fake.quick({ baseURL, maxAttempts: 2 }).chat(HELLO));
    assertEngineError(error, true);
  });

  test('aborting while waiting for the first token ends quietly and closes the request', async () => {
    fake.server.set({ firstTokenLatencyMs: 5_000 });
    const controller = new AbortController();
    const done = collectReply(fake.model().chat({ ...HELLO, signal: controller.signal }));
    while (fake.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    assert.deepEqual((await done).events, []);
    assert.equal(await fake.server.settled(), true);
  });

  test('aborting during the backoff ends the iteration quietly', { timeout: 10_000 }, async () => {
    fake.server.set({ failFirst: { count: 10, status: 503 } });
    const controller = new AbortController();
    const model = fake.model({ retryBaseDelayMs: 60_000, maxRetryDelayMs: 60_000 });
    const done = collectReply(model.chat({ ...HELLO, signal: controller.signal }));
    while (fake.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    assert.deepEqual((await done).events, []);
    assert.equal(fake.server.requests.length, 1);
  });

  test('uses the wait the server asks for (retry-after-ms), capped', async () => {
    fake.server.set({ failFirst: { count: 1, status: 429, retryAfterMs: 1 }, reply: { text: 'ok then' } });
    const reply = await collectReply(
      fake.model({ retryBaseDelayMs: 60_000, maxRetryDelayMs: 60_000 }).chat(HELLO),
    );
    assert.equal(reply.text, 'ok then');
    assert.equal(fake.server.requests.length, 2);
  });
});
