/**
 * Calls whose caller's words no engine recognises still run: with no STT at all, or one that does not serve the
 * call's language, the session takes turns by voice activity alone, keeps each caller turn as unrecognised
 * speech (`recognized: false`, empty text), and the scripted dialog engine moves the flow on by turns. Transcript
 * times are the caller's speech as heard: a caller line of known length starts and ends in the transcript within
 * 100 ms of where its audio does, with words and without.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { type AgentSettings, DEFAULT_END_CALL } from '../core/agents/types.ts';
import { validateFlow } from '../core/flows/validate.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import type { SpeechToText } from '../engines/stt/types.ts';
import { durationMs, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

/** How far a transcript time may lie from the caller's audio: a few VAD windows. */
const TOLERANCE_MS = 100;
const LINE = 'I would like to know when my order will be delivered to my house.';

function hindiFlowAgent(): AgentSettings {
  const checked = validateFlow(
    {
      nodes: [
        {
          id: 'start',
          type: 'startCall',
          data: { greeting: 'Namaste {{name}}! Aapka order kab chahiye?', prompt: 'Ask when to deliver.' },
        },
        { id: 'confirm', type: 'agentNode', data: { prompt: 'Confirm the delivery slot.' } },
        { id: 'bye', type: 'endCall', data: { prompt: 'Say goodbye.' } },
      ],
      edges: [
        {
          id: 'e1',
          source: 'start',
          target: 'confirm',
          data: { label: 'slot_given', condition: 'The caller named a delivery slot' },
        },
        {
          id: 'e2',
          source: 'confirm',
          target: 'bye',
          data: { label: 'confirmed', condition: 'The caller confirmed the slot' },
        },
      ],
    },
    [],
  );
  assert.ok(checked.ok);
  return testAgent({
    language: 'hi-IN',
    voice: { voice_id: 'local-hi-female', language: 'hi-IN' },
    first_message: '',
    flow: checked.flow,
    end_call: { ...DEFAULT_END_CALL, enabled: false },
  });
}

describe('calls without recognised words', () => {
  let engines: LocalEngines;
  let line: Int16Array;
  before(async () => {
    engines = await localEngines();
    line = await speech(engines.tts, LINE);
  });
  after(() => engines.close());

  /** An STT that serves English only, over the fake transcription server. */
  function englishOnly(): SpeechToText {
    const stt = engines.stt;
    return {
      provider: 'english-only',
      capabilities: stt.capabilities,
      languages: ['en-IN'],
      stream: (options) => stt.stream(options),
      transcribe: (audio, options) => stt.transcribe(audio, options),
    };
  }

  async function caller(call: CallHarness, leadInMs: number): Promise<number> {
    await call.feed(null, leadInMs);
    const startsAt = call.nowMs;
    await call.say(line, LINE);
    return startsAt;
  }

  test('no STT at all: a flow moves on by turns, each kept as unrecognised speech at its true times', async () => {
    const call = new CallHarness({
      agent: hindiFlowAgent(),
      engines: { llm: new ScriptedDialogModel(), vad: engines.vad, speaker: engines.tts },
    }).start();
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    assert.equal(
      call.first('turn_taking_by_voice')?.event.reason,
      'no speech-to-text engine runs on this node',
    );
    const startsAt = await caller(call, 700);
    assert.ok(await call.until(() => call.first('transition') !== undefined, ENGINE_WAIT_MS), call.log());
    const turn = call.first('caller_turn')?.event;
    assert.deepEqual([turn?.text, turn?.recognized], ['', false]);
    assert.deepEqual(
      [call.first('transition')?.event.from, call.first('transition')?.event.to],
      ['start', 'confirm'],
    );
    assert.ok(await call.until(() => call.first('latency') !== undefined, ENGINE_WAIT_MS), call.log());
    assert.equal(call.first('latency')?.event.recognized, false);
    assert.equal(call.first('latency')?.event.latency.stt_final_ms, 0);

    call.session.stopped();
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'customer-ended-call');
    const callerTurns = outcome.transcript.filter((t) => t.speaker === 'caller');
    assert.equal(callerTurns.length, 1, JSON.stringify(outcome.transcript));
    const [heard] = callerTurns;
    assert.deepEqual([heard?.text, heard?.recognized], ['', false]);
    assert.ok(
      Math.abs((heard?.startMs ?? 0) - startsAt) <= TOLERANCE_MS,
      `start ${heard?.startMs} vs ${startsAt}`,
    );
    const endsAt = startsAt + durationMs(line);
    assert.ok(
      Math.abs((heard?.endMs ?? 0) - endsAt) <= TOLERANCE_MS + 200,
      `end ${heard?.endMs} vs ${endsAt}`,
    );
  });

  test('an STT that does not serve the language: turns by voice; in its language, words at their true times', async () => {
    const hindi = new CallHarness({
      agent: hindiFlowAgent(),
      engines: { llm: new ScriptedDialogModel(), stt: englishOnly(), vad: engines.vad, speaker: engines.tts },
    }).start();
    assert.equal(
      hindi.first('turn_taking_by_voice')?.event.reason,
      'the english-only speech-to-text does not transcribe hi-IN',
    );
    hindi.session.stopped();
    await hindi.session.finished;

    const english = new CallHarness({
      agent: testAgent(),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: englishOnly(), vad: engines.vad, speaker: engines.tts },
    }).start();
    assert.equal(english.first('turn_taking_by_voice'), undefined);
    assert.ok(await english.until(() => english.spoke('t1'), ENGINE_WAIT_MS), english.log());
    const startsAt = await caller(english, 1500);
    assert.ok(
      await english.until(() => english.first('caller_turn') !== undefined, ENGINE_WAIT_MS),
      english.log(),
    );
    english.session.stopped();
    const outcome = await english.session.finished;
    const [heard] = outcome.transcript.filter((t) => t.speaker === 'caller');
    assert.deepEqual([heard?.text, heard?.recognized], [LINE, true]);
    // The caller's line is several seconds long: its turn is not a fixed second before its end.
    assert.ok(durationMs(line) > 2500, `line of ${durationMs(line)} ms`);
    assert.ok(
      Math.abs((heard?.startMs ?? 0) - startsAt) <= TOLERANCE_MS,
      `start ${heard?.startMs} vs ${startsAt}`,
    );
  });
});
