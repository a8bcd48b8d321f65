/**
 * A caller who goes silent: the agent checks on them after `behavior.silence_reprompt_secs` of silence counted
 * from the end of its audio playout, caller speech starts the count again, and after
 * `end_call.after_silence_reprompts` unanswered re-prompts the next silence ends the call (`silence-timed-out`).
 * A flow node may set its own delay and line. Real engines (eSpeak NG, Silero, a fake transcription server);
 * call time moves only as the test feeds frames, so a 2 s silence takes well under a second.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { AgentSettings } from '../core/agents/types.ts';
import { validateFlow } from '../core/flows/validate.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

/** A frame either side: the check runs once per 20 ms frame, the playout ends on a frame tick. */
const FRAME_SLACK_MS = 40;

function silentCallerAgent(overrides: Partial<AgentSettings> = {}): AgentSettings {
  const base = testAgent();
  return testAgent({
    behavior: { ...base.behavior, silence_reprompt_secs: 2 },
    end_call: { ...base.end_call, after_silence_reprompts: 2 },
    ...overrides,
  });
}

describe('a silent caller', () => {
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

  const repromptTurns = (call: CallHarness) =>
    call.all('agent_turn').filter(({ event }) => event.text === 'Are you still there?');

  test('is re-prompted after the set silence from the end of playout, then the call ends as silence-timed-out', async () => {
    const call = startCall(silentCallerAgent());
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS), call.log());
    const outcome = await call.session.finished;

    assert.equal(outcome.reason, 'silence-timed-out', call.log());
    assert.equal(call.carrier.ended, 'silence-timed-out');
    const silences = call.all('silence');
    assert.deepEqual(
      silences.map(({ event }) => event.action),
      ['reprompt', 'reprompt', 'end'],
      call.log(),
    );
    // Each silence is counted from the end of the agent turn before it: the opening, then each re-prompt.
    const turnsBefore = call.all('agent_turn').slice(0, 3);
    silences.forEach((silence, i) => {
      const playedOutAt = turnsBefore[i]?.atMs ?? Number.NaN;
      const waited = silence.atMs - playedOutAt;
      assert.ok(waited >= 2000 && waited <= 2000 + FRAME_SLACK_MS, `silence ${i} after ${waited} ms`);
    });
    // Re-prompts are the agent's turns in the transcript; the call closes with a goodbye.
    const agentLines = outcome.transcript.filter((t) => t.speaker === 'agent').map((t) => t.text);
    assert.deepEqual(agentLines, [
      'Hello Ravi, this is Asha from Acme.',
      'Are you still there?',
      'Are you still there?',
      'I cannot hear you, so I will end the call now. Goodbye.',
    ]);
  });

  test('speaking starts the silence count again and clears the unanswered re-prompts', async () => {
    const call = startCall(silentCallerAgent());
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    assert.ok(await call.until(() => repromptTurns(call).length === 1, ENGINE_WAIT_MS), call.log());
    // Quiet for a little less than the re-prompt delay, then the caller answers.
    await call.feed(null, 1500);
    const line = 'Yes, I am here. I would like to know about my order.';
    await call.say(await speech(engines.tts, line), line);
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS * 2), call.log());
    const outcome = await call.session.finished;

    assert.equal(outcome.reason, 'silence-timed-out', call.log());
    const actions = call.all('silence').map(({ event }) => event.action);
    // One re-prompt before the caller spoke, then two more unanswered ones before the call ends.
    assert.deepEqual(actions, ['reprompt', 'reprompt', 'reprompt', 'end'], call.log());
    const callerTurn = call.first('caller_turn');
    assert.ok(callerTurn, call.log());
    const secondSilence = call.all('silence')[1];
    assert.ok(secondSilence && secondSilence.atMs > callerTurn.atMs + 2000, call.log());
  });

  test('with re-prompts off, silence neither re-prompts nor ends the call', async () => {
    const base = testAgent();
    const call = startCall(testAgent({ behavior: { ...base.behavior, silence_reprompt_secs: 0 } }));
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.feed(null, 10_000);
    assert.equal(call.all('silence').length, 0, call.log());
    assert.equal(call.carrier.ended, undefined);
    call.session.stopped();
  });

  test('a flow node sets its own re-prompt delay and line', async () => {
    const checked = validateFlow(
      {
        nodes: [
          {
            id: 'start',
            type: 'startCall',
            data: {
              greeting: 'Hello {{name}}, is this a good time?',
              prompt: 'Ask if it is a good time.',
              silence_reprompt_secs: 4,
              silence_reprompt_message: 'Hello? Can you hear me?',
            },
          },
          { id: 'bye', type: 'endCall', data: { prompt: 'Say goodbye.' } },
        ],
        edges: [
          {
            id: 'e1',
            source: 'start',
            target: 'bye',
            data: { label: 'done', condition: 'The caller is done' },
          },
        ],
      },
      [],
    );
    assert.ok(checked.ok);
    const call = startCall(silentCallerAgent({ flow: checked.flow, first_message: '' }));
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    assert.ok(await call.until(() => call.all('silence').length > 0, ENGINE_WAIT_MS), call.log());
    const [first] = call.all('silence');
    const opening = call.all('agent_turn')[0];
    assert.ok(first && opening);
    const waited = first.atMs - opening.atMs;
    assert.ok(waited >= 4000 && waited <= 4000 + FRAME_SLACK_MS, `re-prompted after ${waited} ms`);
    assert.ok(await call.until(() => call.all('agent_turn').length >= 2, ENGINE_WAIT_MS), call.log());
    assert.equal(call.all('agent_turn')[1]?.event.text, 'Hello? Can you hear me?');
    call.session.stopped();
  });
});
