/**
 * Endpointing end to end with real speech: a caller who pauses mid-sentence ("I want to check my order and",
 * 400 ms, "also change my address") takes one turn, not two, although a batch STT only hands over the words of
 * the first half after the pause has begun.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { silence, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

/** The pause in the middle of the caller's sentence. */
const PAUSE_MS = 400;

let engines: LocalEngines;
before(async () => {
  engines = await localEngines();
});
after(() => engines.close());

test('a 400 ms pause after "and" does not end the caller\'s turn', async () => {
  const call = new CallHarness({
    agent: testAgent({ first_message: 'Hello Ravi.' }),
    stt: engines.sttServer,
    engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
  }).start();
  assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
  const first = 'I want to check my order and';
  const second = 'also change my address';
  await call.say(await speech(engines.tts, first), first);
  await call.feed(silence(PAUSE_MS));
  await call.say(await speech(engines.tts, second), second);
  assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
  const turns = call.all('caller_turn').map((e) => e.event.text);
  assert.deepEqual(turns, [`${first} ${second}`], call.log());
  call.session.stopped();
  const outcome = await call.session.finished;
  assert.deepEqual(
    outcome.transcript.map((t) => t.speaker),
    ['agent', 'caller', 'agent'],
  );
});
