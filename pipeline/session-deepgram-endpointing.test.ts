/**
 * The turn-end policy end to end, with a streaming STT that commits: the Deepgram provider against a fake
 * Deepgram live server (its `speech_final` comes after the `endpointing` the provider asks for). A caller who
 * pauses 800 ms after "so" or "aur" takes one turn with the whole sentence: the agent says nothing in the pause
 * and is not interrupted. A finished sentence is answered sooner than a plain silence of `endpointing_ms`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { DeepgramTranscriber } from '../engines/stt/providers/deepgram.ts';
import { FAKE_ENDPOINTING_MS } from '../engines/stt/testing/fake-deepgram-recognizer.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import { silence, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

/** The caller's pause to think, mid-sentence: longer than Deepgram's endpointing and the agent's. */
const PAUSE_MS = 800;
const ENDPOINTING_MS = testAgent().behavior.endpointing_ms;

let engines: LocalEngines;
before(async () => {
  engines = await localEngines();
});
after(() => engines.close());

async function callWith(transcripts: string[]) {
  const server = await FakeDeepgramServer.start({ transcripts });
  const call = new CallHarness({
    agent: testAgent({ first_message: 'Hello Ravi.' }),
    engines: {
      llm: new ScriptedDialogModel(),
      stt: new DeepgramTranscriber({ baseUrl: server.baseUrl, endpointingMs: FAKE_ENDPOINTING_MS }),
      vad: engines.vad,
      speaker: engines.tts,
    },
  }).start();
  assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
  return { server, call };
}

describe('turn end with a committing STT (Deepgram)', () => {
  for (const [language, first, second] of [
    ['English', 'I would like to book a table for two so', 'around eight tonight.'],
    ['Hindi', 'mujhe kal shaam do logon ke liye table chahiye aur', 'aath baje ke aas paas.'],
  ] as const) {
    test(`${language}: a ${PAUSE_MS} ms pause after the connective is not the end of the turn`, async () => {
      const { server, call } = await callWith([first, second]);
      try {
        await call.say(await speech(engines.tts, first), first);
        await call.feed(silence(PAUSE_MS));
        const resumedAtMs = call.nowMs;
        await call.say(await speech(engines.tts, second), second);
        assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
        // The STT did commit the first half in the pause: the policy held the turn open.
        const commits = call.all('transcript').filter((e) => e.event.final);
        assert.equal(commits[0]?.event.text, first, call.log());
        assert.ok(commits[0] !== undefined && commits[0].atMs < resumedAtMs, call.log());
        const turns = call.all('caller_turn').map((e) => e.event.text);
        assert.deepEqual(turns, [`${first} ${second}`], call.log());
        const reply = call.carrier.turns.get('t2');
        assert.ok(reply !== undefined && reply.firstAtMs > resumedAtMs, 'no agent audio in the pause');
        assert.deepEqual(call.all('interruption'), [], call.log());
        call.session.stopped();
        const outcome = await call.session.finished;
        assert.deepEqual(
          outcome.transcript.map((t) => t.speaker),
          ['agent', 'caller', 'agent'],
        );
      } finally {
        await server.close();
      }
    });
  }

  test('a finished sentence is answered sooner than a plain silence of endpointing_ms', async () => {
    const sentence = 'I would like to book a table for two.';
    const { server, call } = await callWith([sentence]);
    try {
      await call.say(await speech(engines.tts, sentence), sentence);
      assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
      const [turn] = call.all('caller_turn');
      assert.equal(turn?.event.text, sentence, call.log());
      assert.ok(turn.event.endpointMs < ENDPOINTING_MS, call.log());
      call.session.stopped();
      await call.session.finished;
    } finally {
      await server.close();
    }
  });
});
