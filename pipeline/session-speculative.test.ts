/**
 * Replies started before the caller's turn is confirmed, end to end, with an STT that does not commit turns (the
 * OpenAI-compatible transcription provider, whose words for an utterance come after its own 500 ms of silence)
 * and an agent whose `endpointing_ms` is longer than that: the turn-end policy is still deciding when the words
 * are in. A reply started on them plays as soon as the turn ends with the same words; one started on words the
 * caller then went on from is aborted, and neither its audio nor its text reaches the caller, the transcript, the
 * events or the next model request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { DEFAULT_BEHAVIOR } from '../core/agents/types.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import {
  type ChatBody,
  FakeOpenAiServer,
  type FakeReply,
} from '../engines/llm/testing/fake-openai-server.ts';
import type { SpeculationOutcome } from './speculative-reply.ts';
import { silence, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

/** The agent's silence to end a turn: longer than the STT's, so the words are in before the turn is decided. */
const ENDPOINTING_MS = 2000;
/** The model's wait before its first words, wall ms (4x that in call time). */
const MODEL_FIRST_TOKEN_MS = 120;

let engines: LocalEngines;
before(async () => {
  engines = await localEngines();
});
after(() => engines.close());

function lastUser(body: ChatBody | undefined): string {
  const users = (body?.messages ?? []).filter((m) => m.role === 'user');
  return String(users.at(-1)?.content ?? '');
}

async function callWith(reply: (body: ChatBody, n: number) => FakeReply, speculative: boolean) {
  const llm = await FakeOpenAiServer.start({ firstTokenLatencyMs: MODEL_FIRST_TOKEN_MS, reply });
  const outcomes: SpeculationOutcome[] = [];
  const call = new CallHarness({
    agent: testAgent({
      first_message: 'Hello Ravi.',
      behavior: { ...DEFAULT_BEHAVIOR, endpointing_ms: ENDPOINTING_MS, speculative_replies: speculative },
    }),
    engines: {
      llm: new OpenAiChatModel({ baseURL: llm.baseURL, apiKey: 'test', model: 'fake-model' }),
      stt: engines.stt,
      vad: engines.vad,
      speaker: engines.tts,
    },
    stt: engines.sttServer,
    onSpeculation: (outcome) => outcomes.push(outcome),
  }).start();
  assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
  return {
    call,
    llm,
    outcomes,
    close: async () => {
      call.session.stopped();
      await call.session.finished;
      await llm.close();
    },
  };
}

/** Call time from the end of the caller's audio to the reply's first audio, and from the turn's decision. */
async function answerGaps(speculative: boolean) {
  const line = 'I would like to check the status of my order';
  const { call, llm, outcomes, close } = await callWith(
    () => ({ text: 'Your order arrives on Friday.' }),
    speculative,
  );
  try {
    await call.say(await speech(engines.tts, line), line);
    const spokeAtMs = call.nowMs;
    assert.ok(await call.until(() => call.carrier.turns.has('t2'), ENGINE_WAIT_MS), call.log());
    const decided = call.first('caller_turn');
    assert.equal(decided?.event.text, line, call.log());
    const firstAtMs = call.carrier.turns.get('t2')!.firstAtMs;
    assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
    assert.equal(llm.requests.length, 1, 'one model request for the turn');
    return { afterSpeech: firstAtMs - spokeAtMs, afterDecision: firstAtMs - decided!.atMs, outcomes };
  } finally {
    await close();
  }
}

describe('replies started before the turn is confirmed', () => {
  test('a reply started on the final words plays as soon as the turn ends with them, sooner than one started then', async () => {
    const early = await answerGaps(true);
    const late = await answerGaps(false);
    assert.deepEqual(early.outcomes, ['started', 'used']);
    assert.deepEqual(late.outcomes, []);
    // Started at the decision, the reply waits at least the model's first token (call time runs at up to 4x
    // wall time); started on the words, it was ready by then.
    const figures = JSON.stringify({ early, late });
    assert.ok(late.afterDecision >= MODEL_FIRST_TOKEN_MS, figures);
    assert.ok(early.afterDecision < late.afterDecision, figures);
    assert.ok(early.afterSpeech <= late.afterSpeech - MODEL_FIRST_TOKEN_MS, figures);
  });

  test('a reply started on words the caller went on from is aborted and reaches nothing', async () => {
    const first = 'I want to book a table';
    const second = 'for two people tonight please';
    const EARLY = `Early words nobody may hear. ${'Then more words, for a long while. '.repeat(40)}`;
    const { call, llm, outcomes, close } = await callWith(
      (body) =>
        lastUser(body) === first
          ? { text: EARLY, firstTokenLatencyMs: 0, tokensPerSecond: 50 }
          : { text: 'A table for two tonight, done.' },
      true,
    );
    try {
      await call.say(await speech(engines.tts, first), first);
      // The early reply is under way, its first clause spoken into the held audio.
      assert.ok(await call.until(() => llm.requests.length === 1, ENGINE_WAIT_MS), call.log());
      await call.feed(silence(300));
      assert.deepEqual(outcomes, ['started']);
      await call.say(await speech(engines.tts, second), second);
      assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
      // The first early reply was discarded when the caller went on; the one on all the words was used.
      assert.deepEqual(outcomes, ['started', 'discarded', 'started', 'used']);
      // Its request was cut (its stream had seconds to go).
      assert.ok(await llm.settled(1_000), 'the early request was aborted');

      assert.equal(llm.requests.length, 2);
      assert.equal(lastUser(llm.requests[0]!.body), first);
      const next = llm.requests[1]!.body!.messages!;
      assert.equal(lastUser(llm.requests[1]!.body), `${first} ${second}`);
      assert.ok(!JSON.stringify(next).includes('Early words'), JSON.stringify(next));
      assert.deepEqual([...call.carrier.turns.keys()], ['t1', 't2']);
      assert.deepEqual(
        call.all('caller_turn').map((e) => e.event.text),
        [`${first} ${second}`],
      );
      assert.ok(!call.log().includes('Early words'), call.log());
      call.session.stopped();
      const outcome = await call.session.finished;
      assert.deepEqual(
        outcome.transcript.map((t) => [t.speaker, t.text]),
        [
          ['agent', 'Hello Ravi.'],
          ['caller', `${first} ${second}`],
          ['agent', 'A table for two tonight, done.'],
        ],
      );
    } finally {
      await close();
    }
  });
});
