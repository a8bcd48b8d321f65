/**
 * Engine failures mid-call never hang it: the real providers against their fake servers on loopback fail (the
 * model answers 500 or its stream is cut, speech answers 500, transcription answers 500), the session reports
 * an `error` event with the stage, says a short fallback line for that turn and goes on; a model or speech that
 * keeps failing ends the call with `pipeline-error`, a transcription that keeps failing does not: the call goes
 * on with turns by voice activity, kept as unrecognised speech.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';
import { FakeOpenAiSpeechServer } from '../engines/tts/testing/fake-openai-speech-server.ts';
import { fallbackLine, MAX_CONSECUTIVE_FAILURES } from './fallback.ts';
import { speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

const QUESTION = 'Where is my order?';
/** Model retries of the test: one more attempt after a short pause, so a failed turn fails quickly. */
const MODEL_RETRIES = { maxAttempts: 2, retryBaseDelayMs: 10, maxRetryDelayMs: 20 } as const;

describe('engine failures during a call', () => {
  let engines: LocalEngines;
  let speechServer: FakeOpenAiSpeechServer;
  before(async () => {
    speechServer = await FakeOpenAiSpeechServer.start();
    engines = await localEngines({ openaiSpeech: { baseURL: speechServer.baseURL, apiKey: 'test' } });
  });
  after(async () => {
    await engines.close();
    await speechServer.close();
  });

  function modelCall(llm: FakeOpenAiServer) {
    return new CallHarness({
      agent: testAgent({ first_message: 'Hello {{name}}.' }),
      stt: engines.sttServer,
      engines: {
        llm: new OpenAiChatModel({
          baseURL: llm.baseURL,
          apiKey: 'test',
          model: 'fake-model',
          ...MODEL_RETRIES,
        }),
        stt: engines.stt,
        vad: engines.vad,
        speaker: engines.tts,
      },
    }).start();
  }

  async function ask(call: CallHarness, text = QUESTION): Promise<void> {
    await call.say(await speech(engines.tts, text), text);
  }

  test('the model answers 500: error event, a fallback line, and the next turn works', async () => {
    const llm = await FakeOpenAiServer.start({
      failFirst: { count: MODEL_RETRIES.maxAttempts, status: 500 },
      reply: { text: 'Your order arrives tomorrow.' },
    });
    try {
      const call = modelCall(llm);
      assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
      await ask(call);
      const sorry = fallbackLine('llm', 'en-IN');
      assert.ok(
        await call.until(
          () => call.first('agent_turn', (e) => e.text === sorry) !== undefined,
          ENGINE_WAIT_MS,
        ),
        call.log(),
      );
      const error = call.first('error');
      assert.equal(error?.event.stage, 'llm');
      assert.match(error?.event.message ?? '', /500/);
      await ask(call);
      const answered = () =>
        call.first('agent_turn', (e) => e.text === 'Your order arrives tomorrow.') !== undefined;
      assert.ok(await call.until(answered, ENGINE_WAIT_MS), call.log());
      assert.equal(call.carrier.ended, undefined);
      assert.equal(llm.requests.length, MODEL_RETRIES.maxAttempts + 1);
      call.session.stopped();
      assert.equal((await call.session.finished).reason, 'customer-ended-call');
    } finally {
      await llm.close();
    }
  });

  test('the model stream is cut: what was said stands, a fallback line follows, the context says so', async () => {
    const llm = await FakeOpenAiServer.start({
      reply: { text: 'Your order is on its way. It will arrive tomorrow before noon.' },
      // The role chunk and seven words: the first sentence and one word of the second, then a reset.
      cutAfterChunks: 8,
      cutBy: 'reset',
      streamFaultsFor: 1,
    });
    try {
      const call = modelCall(llm);
      assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
      await ask(call);
      const sorry = fallbackLine('llm', 'en-IN');
      assert.ok(
        await call.until(
          () => call.first('agent_turn', (e) => e.text === sorry) !== undefined,
          ENGINE_WAIT_MS,
        ),
        call.log(),
      );
      assert.equal(call.first('error')?.event.stage, 'llm');
      assert.equal(
        call.first('agent_turn', (e) => e.turnId === 't2')?.event.text,
        'Your order is on its way.',
      );
      await ask(call, 'When will it arrive?');
      assert.ok(await call.until(() => llm.requests.length >= 2, ENGINE_WAIT_MS), call.log());
      const messages = (llm.requests[1]?.body?.messages ?? []).map((m) => `${m.role}: ${m.content}`);
      assert.deepEqual(messages.slice(-4), [
        `user: ${QUESTION}`,
        'assistant: Your order is on its way.…',
        `assistant: ${sorry}`,
        'user: When will it arrive?',
      ]);
      call.session.stopped();
      await call.session.finished;
    } finally {
      await llm.close();
    }
  });

  test('speech answers 500: error event, the fallback line is spoken, the call goes on', async () => {
    speechServer.reset({ failCount: 1, failStatus: 500 });
    const call = new CallHarness({
      agent: testAgent({ voice: { voice_id: 'openai-alloy', language: 'en-IN' } }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
    const sorry = fallbackLine('tts', 'en-IN');
    assert.ok(
      await call.until(() => call.first('agent_turn', (e) => e.text === sorry) !== undefined, ENGINE_WAIT_MS),
      call.log(),
    );
    assert.deepEqual(
      call.all('error').map((e) => [e.event.stage, e.event.turnId]),
      [['tts', 't1']],
    );
    await ask(call);
    assert.ok(await call.until(() => call.all('agent_turn').length >= 2, ENGINE_WAIT_MS), call.log());
    assert.equal(call.carrier.ended, undefined);
    call.session.stopped();
    await call.session.finished;
  });

  test(`speech that keeps failing ends the call after ${MAX_CONSECUTIVE_FAILURES} failed turns with pipeline-error`, async () => {
    speechServer.reset({ failCount: 1000, failStatus: 503 });
    const call = new CallHarness({
      agent: testAgent({ voice: { voice_id: 'openai-alloy', language: 'en-IN' } }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
    for (let turn = 1; turn < MAX_CONSECUTIVE_FAILURES; turn++) {
      assert.ok(await call.until(() => call.all('error').length >= 2 * turn - 1, ENGINE_WAIT_MS), call.log());
      await ask(call);
    }
    assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS), call.log());
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'pipeline-error');
    assert.equal(call.carrier.ended, 'pipeline-error');
    assert.ok(
      call.all('error').every((e) => e.event.stage === 'tts'),
      call.log(),
    );
    speechServer.reset();
  });

  test('transcription answers 500: error event, the agent asks again, and hears the caller next time', async () => {
    const llm = await FakeOpenAiServer.start({ reply: { text: 'Your order arrives tomorrow.' } });
    try {
      const call = modelCall(llm);
      assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
      // The request and its one retry fail.
      engines.sttServer.reply({ status: 500 }, { status: 500 });
      await ask(call);
      const sorry = fallbackLine('stt', 'en-IN');
      assert.ok(
        await call.until(
          () => call.first('agent_turn', (e) => e.text === sorry) !== undefined,
          ENGINE_WAIT_MS,
        ),
        call.log(),
      );
      assert.equal(call.first('error')?.event.stage, 'stt');
      assert.equal(call.all('caller_turn').length, 0);
      await ask(call);
      const answered = () =>
        call.first('agent_turn', (e) => e.text === 'Your order arrives tomorrow.') !== undefined;
      assert.ok(await call.until(answered, ENGINE_WAIT_MS), call.log());
      assert.deepEqual(
        call.all('caller_turn').map((e) => e.event.text),
        [QUESTION],
      );
      call.session.stopped();
      await call.session.finished;
    } finally {
      await llm.close();
    }
  });

  test(`transcription that keeps failing: after ${MAX_CONSECUTIVE_FAILURES} lost turns the call goes on by voice activity, not ended`, async () => {
    const llm = await FakeOpenAiServer.start({ reply: { text: 'Your order arrives tomorrow.' } });
    try {
      const call = modelCall(llm);
      assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
      // Every request and its retry fail, for every turn.
      const failing = Array.from({ length: 2 * MAX_CONSECUTIVE_FAILURES }, () => ({ status: 500 }));
      engines.sttServer.reply(...failing);
      const sorry = fallbackLine('stt', 'en-IN');
      for (let turn = 1; turn < MAX_CONSECUTIVE_FAILURES; turn++) {
        await ask(call);
        const apologies = () => call.all('agent_turn').filter((e) => e.event.text === sorry).length;
        assert.ok(await call.until(() => apologies() === turn, ENGINE_WAIT_MS), call.log());
      }
      await ask(call);
      const answered = () =>
        call.first('agent_turn', (e) => e.text === 'Your order arrives tomorrow.') !== undefined;
      assert.ok(await call.until(answered, ENGINE_WAIT_MS), call.log());
      assert.ok(call.first('turn_taking_by_voice') !== undefined, call.log());
      assert.deepEqual(
        call.all('caller_turn').map((e) => [e.event.text, e.event.recognized]),
        [['', false]],
      );
      // The model was told the caller spoke without recognised words.
      const lastRequest = llm.requests.at(-1);
      assert.match(JSON.stringify(lastRequest), /could not be recognised/);
      call.session.stopped();
      const outcome = await call.session.finished;
      assert.equal(outcome.reason, 'customer-ended-call');
      const callerTurns = outcome.transcript.filter((t) => t.speaker === 'caller');
      assert.equal(callerTurns.length, MAX_CONSECUTIVE_FAILURES);
      assert.ok(callerTurns.every((t) => t.text === '' && t.recognized === false));
    } finally {
      await llm.close();
    }
  });
});
