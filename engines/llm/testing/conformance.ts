/**
 * The behaviour every `LanguageModel` provider shares. A provider's test file calls `languageModelConformance`
 * with a factory for a subject: the model plus requests that make it answer with text, with a tool call, or
 * with a long paced text (for the abort cases).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { collectReply } from '../collect.ts';
import type { ChatEvent, ChatRequest, LanguageModel } from '../types.ts';

export interface ConformanceSubject {
  model: LanguageModel;
  /** A request answered with plain text of several words. */
  textRequest(): ChatRequest;
  /** The exact text of that answer, when the subject knows it. */
  expectedText?: string;
  /** A request answered with a call of one of its `functions`. */
  toolCallRequest(): ChatRequest;
  /**
   * A request answered with many words, paced slowly enough to abort midway. With upstream requests, the whole
   * reply must take longer than `settled` waits, so that a request left open is caught.
   */
  slowTextRequest(): ChatRequest;
  /** Resolves true once no upstream request is open (providers without upstream requests leave it out). */
  settled?(): Promise<boolean>;
  close(): Promise<void>;
}

export function languageModelConformance(name: string, makeSubject: () => Promise<ConformanceSubject>): void {
  describe(`LanguageModel conformance: ${name}`, () => {
    let subject: ConformanceSubject;
    before(async () => {
      subject = await makeSubject();
    });
    after(() => subject.close());

    const assertSettled = async (): Promise<void> => {
      if (subject.settled !== undefined)
        assert.equal(await subject.settled(), true, 'an upstream request leaked');
    };

    test('names its provider and model and declares streaming', () => {
      assert.ok(subject.model.provider.length > 0);
      assert.ok(subject.model.model.length > 0);
      assert.equal(subject.model.capabilities.streaming, true);
    });

    test('streams text in order and ends with exactly one done', async () => {
      const reply = await collectReply(subject.model.chat(subject.textRequest()));
      const texts = reply.events.filter((event) => event.type === 'text');
      assert.ok(texts.length > 1, 'the text came as one block, not streamed');
      for (const event of texts) assert.ok(event.text.length > 0, 'empty text delta');
      assert.equal(reply.events.filter((event) => event.type === 'done').length, 1);
      assert.equal(reply.events.at(-1)?.type, 'done');
      assert.equal(reply.finishReason, 'stop');
      assert.deepEqual(reply.toolCalls, []);
      if (subject.expectedText !== undefined) assert.equal(reply.text, subject.expectedText);
      await assertSettled();
    });

    test('tool calls come out whole, once each, with JSON object arguments', async () => {
      const request = subject.toolCallRequest();
      const offered = new Set((request.functions ?? []).map((fn) => fn.name));
      const reply = await collectReply(subject.model.chat(request));
      assert.ok(reply.toolCalls.length > 0, 'no tool call');
      for (const call of reply.toolCalls) {
        assert.ok(offered.has(call.name), `${call.name} was not offered`);
        assert.ok(call.id.length > 0);
        const args: unknown = JSON.parse(call.arguments);
        assert.ok(typeof args === 'object' && args !== null && !Array.isArray(args));
      }
      assert.equal(new Set(reply.toolCalls.map((call) => call.id)).size, reply.toolCalls.length);
      assert.equal(reply.events.filter((event) => event.type === 'done').length, 1);
      assert.equal(reply.events.at(-1)?.type, 'done');
      assert.equal(reply.finishReason, 'tool_calls');
    });

    test('an already aborted signal yields nothing and throws nothing', async () => {
      const reply = await collectReply(
        subject.model.chat({ ...subject.textRequest(), signal: AbortSignal.abort() }),
      );
      assert.deepEqual(reply.events, []);
      await assertSettled();
    });

    test('abort mid-stream ends the iteration at once, quietly, and leaks no request', async () => {
      const controller = new AbortController();
      const seen: ChatEvent[] = [];
      let afterAbort = 0;
      for await (const event of subject.model.chat({
        ...subject.slowTextRequest(),
        signal: controller.signal,
      })) {
        if (controller.signal.aborted) afterAbort++;
        seen.push(event);
        if (event.type === 'text') controller.abort();
      }
      assert.equal(seen.length, 1);
      assert.equal(afterAbort, 0);
      await assertSettled();
    });

    test('leaving the loop early releases the request', async () => {
      for await (const event of subject.model.chat(subject.slowTextRequest())) {
        if (event.type === 'text') break;
      }
      await assertSettled();
    });

    test('works normally after an aborted chat', async () => {
      const controller = new AbortController();
      for await (const event of subject.model.chat({
        ...subject.slowTextRequest(),
        signal: controller.signal,
      })) {
        if (event.type === 'text') controller.abort();
      }
      const reply = await collectReply(subject.model.chat(subject.textRequest()));
      assert.equal(reply.finishReason, 'stop');
      if (subject.expectedText !== undefined) assert.equal(reply.text, subject.expectedText);
    });

    test('concurrent chats do not mix', async () => {
      const [text, tool] = await Promise.all([
        collectReply(subject.model.chat(subject.textRequest())),
        collectReply(subject.model.chat(subject.toolCallRequest())),
      ]);
      assert.equal(text.finishReason, 'stop');
      assert.deepEqual(text.toolCalls, []);
      if (subject.expectedText !== undefined) assert.equal(text.text, subject.expectedText);
      assert.equal(tool.finishReason, 'tool_calls');
      assert.ok(tool.toolCalls.length > 0);
    });

    test('leaves the request it was given unchanged', async () => {
      const request = subject.toolCallRequest();
      const copy = structuredClone({ messages: request.messages, functions: request.functions });
      await collectReply(subject.model.chat(request));
      assert.deepEqual({ messages: request.messages, functions: request.functions }, copy);
    });
  });
}
