import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ReplyAudioSink, ReplyResult } from './reply.ts';
import {
  addCallerMessage,
  conversationBasis,
  type DiscardReason,
  normalizeWords,
  type SpeculationHooks,
  type SpeculationOutcome,
  SpeculativeReplies,
  withCallerMessage,
  worthStartingEarly,
} from './speculative-reply.ts';

/** A reply the test drives: it speaks when told, and ends when its signal aborts or the test finishes it. */
class DrivenReply {
  aborted = false;
  confirmed: boolean | undefined;
  private finishWith: (result: ReplyResult) => void = () => {};
  readonly result: Promise<ReplyResult>;

  constructor(
    readonly text: string,
    private readonly hooks: SpeculationHooks,
  ) {
    hooks.signal.addEventListener('abort', () => {
      this.aborted = true;
      this.finish();
    });
    void hooks.confirmed.then((c) => {
      this.confirmed = c;
    });
    this.result = new Promise((resolve) => {
      this.finishWith = resolve;
    });
  }

  speak(text: string): void {
    this.hooks.sink.audio('early', new Int16Array(320), text);
  }

  finish(failure?: Error): void {
    const result: ReplyResult = {
      text: this.text,
      actions: [],
      endCall: undefined,
      timings: { requestAtWallMs: 0, firstAudioAtWallMs: 10 },
      aborted: this.hooks.signal.aborted,
    };
    if (failure) result.failure = { stage: 'llm', error: failure };
    this.finishWith(result);
  }
}

function setup(nowMs = () => 100) {
  const replies: DrivenReply[] = [];
  const outcomes: Array<[SpeculationOutcome, DiscardReason | undefined]> = [];
  const early = new SpeculativeReplies(
    (text, hooks) => {
      const reply = new DrivenReply(text, hooks);
      replies.push(reply);
      return reply.result;
    },
    nowMs,
    (outcome, reason) => outcomes.push([outcome, reason]),
  );
  return { early, replies, outcomes };
}

function recordingSink(): ReplyAudioSink & { heard: Array<[string, string]> } {
  const heard: Array<[string, string]> = [];
  return { heard, audio: (turnId, _pcm, text) => heard.push([turnId, text]) };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('speculative replies', () => {
  test('the same words (case, punctuation, spacing aside) use the reply: held audio plays, then the rest', async () => {
    const { early, replies, outcomes } = setup(() => 500);
    early.offer('I want to check my order', 'basis');
    assert.equal(replies.length, 1);
    replies[0]?.speak('Sure, let me look.');
    // Offered again with the same words: nothing new starts.
    early.offer('i want to  check my order', 'basis');
    assert.equal(replies.length, 1);
    const claimed = early.claim('I want to check my order.', 'basis');
    assert.ok(claimed);
    const sink = recordingSink();
    const turn = new AbortController();
    const result = claimed.adopt('t2', sink, turn.signal);
    assert.deepEqual(sink.heard, [['t2', 'Sure, let me look.']]);
    replies[0]?.speak('It is on its way.');
    assert.deepEqual(sink.heard.at(-1), ['t2', 'It is on its way.']);
    replies[0]?.finish();
    const r = await result;
    // The caller could hear it only from the adoption on.
    assert.equal(r.timings.firstAudioAtWallMs, 500);
    await flush();
    assert.equal(replies[0]?.confirmed, true);
    assert.equal(replies[0]?.aborted, false);
    assert.deepEqual(outcomes, [
      ['started', undefined],
      ['used', undefined],
    ]);
    assert.deepEqual(early.counts, { started: 1, used: 1, discarded: 0 });
  });

  test('changed words discard the reply, aborted, and start another; its audio is never handed on', async () => {
    const { early, replies, outcomes } = setup();
    early.offer('I want to book a table', 'a');
    replies[0]?.speak('Sure, for how many?');
    early.offer('I want to book a table for two', 'a');
    assert.equal(replies.length, 2);
    assert.equal(replies[0]?.aborted, true);
    await flush();
    assert.equal(replies[0]?.confirmed, false);
    const claimed = early.claim('I want to book a table for two', 'a');
    assert.ok(claimed);
    const sink = recordingSink();
    const result = claimed.adopt('t2', sink, new AbortController().signal);
    // Audio of the discarded reply, late, goes nowhere.
    replies[0]?.speak('Sure, for how many?');
    replies[1]?.speak('A table for two.');
    replies[1]?.finish();
    await result;
    assert.deepEqual(sink.heard, [['t2', 'A table for two.']]);
    assert.deepEqual(outcomes, [
      ['started', undefined],
      ['discarded', 'words_changed'],
      ['started', undefined],
      ['used', undefined],
    ]);
  });

  test('the turn ending with other words discards the reply, aborted, and claims nothing', async () => {
    const { early, replies, outcomes } = setup();
    early.offer('book a table', 'a');
    assert.equal(early.claim('book a table for two', 'a'), null);
    assert.equal(replies[0]?.aborted, true);
    assert.equal(early.pending, false);
    assert.deepEqual(outcomes.at(-1), ['discarded', 'turn_differs']);
  });

  test('the caller resuming discards the reply, aborted', async () => {
    const { early, replies, outcomes } = setup();
    early.offer('I would like to book', 'a');
    early.withdraw('caller_resumed');
    assert.equal(replies[0]?.aborted, true);
    await flush();
    assert.equal(replies[0]?.confirmed, false);
    assert.equal(early.claim('I would like to book', 'a'), null);
    assert.deepEqual(outcomes, [
      ['started', undefined],
      ['discarded', 'caller_resumed'],
    ]);
    assert.deepEqual(early.counts, { started: 1, used: 0, discarded: 1 });
  });

  test('a conversation that moved on, or a reply that failed, is not used', async () => {
    const { early, replies, outcomes } = setup();
    early.offer('hello', 'before');
    assert.equal(early.claim('hello', 'after'), null);
    assert.deepEqual(outcomes.at(-1), ['discarded', 'conversation_changed']);
    early.offer('hello', 'before');
    replies[1]?.finish(new Error('model down'));
    await flush();
    assert.equal(early.claim('hello', 'before'), null);
    assert.deepEqual(outcomes.at(-1), ['discarded', 'failed']);
  });

  test('a claimed reply the turn does not use after all is discarded, once', () => {
    const { early, replies } = setup();
    early.offer('please stop calling me', 'a');
    const claimed = early.claim('please stop calling me', 'a');
    claimed?.discard('stopped');
    claimed?.discard('stopped');
    assert.equal(replies[0]?.aborted, true);
    assert.deepEqual(early.counts, { started: 1, used: 0, discarded: 1 });
  });

  test("the adopted reply stops with the turn (a barge-in aborts the turn's signal)", () => {
    const { early, replies } = setup();
    early.offer('hello there', 'a');
    const claimed = early.claim('Hello there!', 'a');
    const turn = new AbortController();
    void claimed?.adopt('t2', recordingSink(), turn.signal);
    assert.equal(replies[0]?.aborted, false);
    turn.abort();
    assert.equal(replies[0]?.aborted, true);
  });

  test('words are compared without case, punctuation or extra spaces, in any script', () => {
    assert.equal(normalizeWords('  Hello,   THERE!  '), 'hello there');
    assert.equal(normalizeWords('मुझे टेबल चाहिए।'), 'मुझे टेबल चाहिए');
    assert.notEqual(normalizeWords('book a table'), normalizeWords('book a table for two'));
  });

  test('text the turn-end policy holds open starts nothing early', () => {
    assert.equal(worthStartingEarly('I want a table for two so', 500), false);
    assert.equal(worthStartingEarly('mujhe table chahiye aur', 500), false);
    assert.equal(worthStartingEarly('I want a table for two', 500), true);
    assert.equal(worthStartingEarly('...', 500), false);
  });

  test("the conversation's basis: the caller's words joined as the turn would join them", () => {
    const history = [
      { role: 'assistant' as const, content: 'Hello.' },
      { role: 'user' as const, content: 'I want' },
    ];
    const conversation = withCallerMessage(history, 'a table.');
    assert.equal(history.length, 2);
    assert.equal(history[1]?.content, 'I want');
    const confirmed = history.map((m) => ({ ...m }));
    addCallerMessage(confirmed, 'a table');
    assert.equal(conversationBasis(conversation, 'n1'), conversationBasis(confirmed, 'n1'));
    assert.notEqual(conversationBasis(conversation, 'n1'), conversationBasis(confirmed, 'n2'));
  });
});
