/**
 * A caller who asks not to be called again: with `behavior.dnc_on_opt_out` (the default) the session says so
 * (`opt_out`, which the gateway turns into a do-not-call entry), acknowledges in one line without asking the
 * model, and ends the call; with the setting off the request is an ordinary turn. Real engines (eSpeak NG,
 * Silero, a fake transcription server that hears the given words); call time moves as the test feeds frames.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { AgentSettings } from '../core/agents/types.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

describe('a caller who opts out', () => {
  let engines: LocalEngines;
  before(async () => {
    engines = await localEngines();
  });
  after(() => engines.close());

  function startCall(agent: AgentSettings): CallHarness {
    return new CallHarness({
      agent,
      stt: engines.sttServer,
      voicemail: false,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
  }

  const line = 'Please do not call me again.';

  test('is acknowledged and the call ends; the session reports the opt-out once', async () => {
    const call = startCall(testAgent());
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, line), line);
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS * 2), call.log());
    const outcome = await call.session.finished;

    assert.equal(outcome.reason, 'assistant-ended-call', call.log());
    assert.equal(call.all('opt_out').length, 1, call.log());
    const agentLines = outcome.transcript.filter((t) => t.speaker === 'agent').map((t) => t.text);
    assert.equal(agentLines.at(-1), 'Understood. We will not call you again. Goodbye.');
    assert.equal(agentLines.length, 2, 'the opening, then the acknowledgement: no reply of the model');
  });

  test('with dnc_on_opt_out off, it is an ordinary turn', async () => {
    const base = testAgent();
    const call = startCall(testAgent({ behavior: { ...base.behavior, dnc_on_opt_out: false } }));
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, line), line);
    assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS * 2), call.log());
    assert.equal(call.all('opt_out').length, 0, call.log());
    assert.equal(call.carrier.ended, undefined);
    call.session.stopped();
  });
});
