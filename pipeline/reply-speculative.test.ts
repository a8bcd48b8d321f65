import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { ChatEvent, ChatMessage, ChatRequest, LanguageModel } from '../engines/llm/types.ts';
import { createDialog } from './dialog/index.ts';
import { generateReply, type Speaker } from './reply.ts';

/** A model that says a clause, another, then calls `end_call` (a function with an effect: the call ends). */
class ClausesThenHangUp implements LanguageModel {
  readonly provider = 'test';
  readonly model = 'test';
  readonly capabilities = { streaming: true, functionCalling: true, choosesTools: true };
  readonly requests: ChatMessage[][] = [];

  async *chat(request: ChatRequest): AsyncIterable<ChatEvent> {
    this.requests.push(request.messages);
    yield { type: 'text', text: 'Sure, I can help. ' };
    yield { type: 'text', text: 'Goodbye then. ' };
    yield { type: 'tool_call', call: { id: 'c1', name: 'end_call', arguments: '{}' } };
    yield { type: 'done', finishReason: 'tool_calls' };
  }
}

/** Speaks one 20 ms chunk per clause, and keeps what it was asked to say. */
class CountingSpeaker implements Speaker {
  readonly said: string[] = [];
  async *synthesize(request: { text: string }): AsyncIterable<Int16Array> {
    this.said.push(request.text);
    yield new Int16Array(320);
  }
}

function speculativeReply(confirmed: Promise<boolean>, signal = new AbortController().signal) {
  const llm = new ClausesThenHangUp();
  const speaker = new CountingSpeaker();
  const history: ChatMessage[] = [{ role: 'assistant', content: 'Hello.' }];
  const dialog = createDialog(testAgent(), {});
  const actions: string[] = [];
  const heard: string[] = [];
  const reply = generateReply({
    turnId: 'early',
    signal,
    history,
    dialog,
    llm,
    speaker,
    voice: { voiceId: 'v', language: 'en-IN' },
    sink: { audio: (_id, _pcm, text) => heard.push(text) },
    wallNow: () => performance.now(),
    onAction: (action) => actions.push(action.type),
    speculative: {
      conversation: [...history, { role: 'user', content: 'I am done, thanks' }],
      confirmed,
    },
  });
  return { reply, llm, speaker, history, actions, heard };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('a reply started before the turn is confirmed', () => {
  test('asks the model with the caller words it was started on, speaks only its first clause, and waits', async () => {
    let confirm: (ok: boolean) => void = () => {};
    const r = speculativeReply(new Promise((resolve) => (confirm = resolve)));
    await settle();
    assert.deepEqual(r.llm.requests[0]?.at(-1), { role: 'user', content: 'I am done, thanks' });
    assert.deepEqual(r.speaker.said, ['Sure,']);
    // The function call (ending the call) waits; nothing joined the conversation.
    assert.deepEqual(r.actions, []);
    assert.equal(r.history.length, 1);
    confirm(true);
    const result = await r.reply;
    assert.deepEqual(r.speaker.said, ['Sure,', 'I can help.', 'Goodbye then.', 'Goodbye!']);
    assert.deepEqual(r.actions, ['end_call']);
    assert.ok(result.endCall);
    assert.equal(r.history.at(-2)?.role, 'assistant');
    assert.equal(r.history.at(-2)?.content, 'Sure, I can help. Goodbye then.');
  });

  test('discarded, it runs no function, adds nothing to the conversation and speaks nothing more', async () => {
    let confirm: (ok: boolean) => void = () => {};
    const controller = new AbortController();
    const r = speculativeReply(new Promise((resolve) => (confirm = resolve)), controller.signal);
    await settle();
    controller.abort();
    confirm(false);
    const result = await r.reply;
    assert.equal(result.aborted, true);
    assert.equal(result.endCall, undefined);
    assert.deepEqual(r.actions, []);
    assert.deepEqual(r.history, [{ role: 'assistant', content: 'Hello.' }]);
    assert.deepEqual(r.speaker.said, ['Sure,']);
  });
});
