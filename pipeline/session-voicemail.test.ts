/**
 * Answering machines end to end: an outbound call answered by a voicemail greeting spoken by eSpeak NG ("Hi, you
 * have reached Ravi, please leave a message after the beep") and a sox beep. The agent hangs up with reason
 * `voicemail`, or leaves its message after the beep and then hangs up; a person who answers is not a machine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { beep, concat, durationMs, silence, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { RecordingSpeaker } from './testing/recording-speaker.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

const GREETING = 'Hi, you have reached Ravi, please leave a message after the beep.';
/** Machines beep shortly after their greeting. */
const BEFORE_BEEP_MS = 400;
const BEEP_SECONDS = 0.5;

describe('voicemail with real speech and a beep', () => {
  let engines: LocalEngines;
  before(async () => {
    engines = await localEngines();
  });
  after(() => engines.close());

  /** The machine picks up: a moment of silence, its greeting, a pause, the beep; returns when the beep ended. */
  async function machineAnswers(call: CallHarness): Promise<number> {
    await call.feed(silence(300));
    await call.say(await speech(engines.tts, GREETING), GREETING);
    await call.feed(concat(silence(BEFORE_BEEP_MS), beep(BEEP_SECONDS, 1000)));
    return call.nowMs;
  }

  test('hangup: the greeting or its beep is detected and the call ends with reason voicemail', async () => {
    const call = new CallHarness({
      agent: testAgent({ voicemail: { action: 'hangup' } }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
    const beepEndMs = await machineAnswers(call);
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS), call.log());
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'voicemail');
    assert.equal(call.carrier.ended, 'voicemail');
    const detected = call.first('voicemail_detected');
    assert.ok(detected, call.log());
    assert.equal(detected.event.action, 'hangup');
    const evidence = detected.event.evidence[0];
    assert.ok(
      (evidence?.kind === 'beep' && Math.abs(evidence.frequencyHz - 1000) <= 10) ||
        (evidence?.kind === 'transcript' && evidence.phrase === 'leave a message'),
      JSON.stringify(detected.event.evidence),
    );
    assert.ok(detected.atMs <= beepEndMs + 2500, `detected at ${detected.atMs} ms`);
    assert.equal(call.all('caller_turn').length, 0, 'the greeting was not answered');
  });

  test('leave_message: the agent waits for the beep, speaks its message with variables, then hangs up', async () => {
    const message = 'Hi {{name}}, this is Asha from Acme. Please call us back when you can.';
    const speaker = new RecordingSpeaker(engines.tts);
    const call = new CallHarness({
      agent: testAgent({ voicemail: { action: 'leave_message', message } }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker },
    }).start();
    const beepEndMs = await machineAnswers(call);
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS), call.log());
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'voicemail');
    assert.equal(call.first('voicemail_detected')?.event.action, 'leave_message');

    const said = 'Hi Ravi, this is Asha from Acme. Please call us back when you can.';
    const turn = call.first('agent_turn', (e) => e.text === said);
    assert.ok(turn, call.log());
    const playback = call.carrier.turns.get(turn.event.turnId)!;
    assert.ok(
      playback.firstAtMs >= beepEndMs,
      `the message began at ${playback.firstAtMs} ms, the beep ended at ${beepEndMs} ms`,
    );
    assert.deepEqual(
      call.carrier.audioOf(turn.event.turnId),
      speaker.audioOf(said),
      'the whole message played',
    );
    assert.ok(
      outcome.durationMs >= playback.firstAtMs + durationMs(speaker.audioOf(said)) - 20,
      'the call ended after the message',
    );
    assert.deepEqual(outcome.transcript.at(-1), {
      speaker: 'agent',
      text: said,
      startMs: outcome.transcript.at(-1)?.startMs,
      endMs: outcome.transcript.at(-1)?.endMs,
      interrupted: false,
    });
    assert.equal(call.all('caller_turn').length, 0, 'the greeting was not answered');
  });

  test('a person who answers is not a machine: the conversation goes on', async () => {
    const call = new CallHarness({
      agent: testAgent({ first_message: 'Hello, this is Asha from Acme.', voicemail: { action: 'hangup' } }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    const hello = 'Yes, this is Ravi speaking. How can I help you?';
    await call.say(await speech(engines.tts, hello), hello);
    assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
    assert.equal(call.first('voicemail_detected'), undefined);
    assert.equal(call.carrier.ended, undefined);
    call.session.stopped();
    assert.equal((await call.session.finished).reason, 'customer-ended-call');
  });
});
