/**
 * CallSession end to end with real engines: eSpeak NG speaks for the agent (and makes the caller's voice),
 * Silero hears the caller, the OpenAI-compatible STT provider transcribes through a fake transcription server
 * on loopback (the outside world), and the scripted dialog engine answers. Frames flow at 4x real time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { AgentSettings } from '../core/agents/types.ts';
import { validateFlow } from '../core/flows/validate.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { OpenAiTranscriber } from '../engines/stt/providers/openai.ts';
import { FakeOpenAiTranscriptionServer } from '../engines/stt/testing/fake-openai-transcription-server.ts';
import { createTextToSpeech, type VoiceRouter } from '../engines/tts/index.ts';
import { SileroVad } from '../engines/vad/providers/silero.ts';
import { CallSession, type SessionEvent } from './session.ts';
import { SimulatedCarrier } from './testing/simulated-carrier.ts';

const FRAME = 320;

const agent = testAgent({ system_prompt: 'Help the caller with their order.', max_duration_secs: 60 });

async function speech(tts: VoiceRouter, text: string): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const c of tts.synthesize({ voiceId: 'local-en-male', text, language: 'en-IN' })) chunks.push(c);
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

describe('CallSession with real engines', () => {
  let tts: VoiceRouter;
  let stt: FakeOpenAiTranscriptionServer;
  let vad: SileroVad;
  let callerSpeech: Int16Array;
  before(async () => {
    tts = createTextToSpeech({ espeak: true });
    stt = await FakeOpenAiTranscriptionServer.start();
    vad = await SileroVad.load();
    callerSpeech = await speech(tts, 'I would like to check the status of my order please.');
  });
  after(async () => {
    await tts.close();
    await stt.close();
  });

  function start(settings: AgentSettings, sttText: string[]) {
    let turn = 0;
    stt.text = () => sttText[Math.min(turn++, sttText.length - 1)] ?? '';
    const carrier = new SimulatedCarrier();
    const events: SessionEvent[] = [];
    const session = new CallSession({
      agent: settings,
      variables: { name: 'Ravi' },
      engines: {
        llm: new ScriptedDialogModel(),
        stt: new OpenAiTranscriber({ baseURL: stt.baseURL, apiKey: 'test', vad }),
        vad,
        speaker: tts,
      },
      output: carrier,
      onEvent: (e) => events.push(e),
    });
    carrier.onAck = (name, dropped) => session.playbackAck(name, dropped);
    session.start();
    /** Feeds caller audio (then silence) frame by frame at 4x real time while the carrier plays. */
    const feed = async (audio: Int16Array | null, ms: number) => {
      const frames = Math.ceil(ms / 20);
      for (let i = 0; i < frames; i++) {
        const frame = new Int16Array(FRAME);
        if (audio) frame.set(audio.subarray(i * FRAME, (i + 1) * FRAME));
        session.audio(frame);
        carrier.tick();
        await sleep(5);
      }
    };
    const until = async (what: () => boolean, ms: number) => {
      for (let waited = 0; !what() && waited < ms; waited += 20) await feed(null, 20);
      return what();
    };
    return { session, carrier, events, feed, until };
  }

  test('greets, hears the caller, answers, and measures the turn', async () => {
    const call = start(agent, ['I would like to check the status of my order please.']);
    const greeted = () => call.events.some((e) => e.type === 'agent_turn' && e.turnId === 't1');
    assert.ok(await call.until(greeted, 8000), 'greeting played');
    const greeting = call.carrier.playedMs;
    assert.ok(greeting > 800, `greeting of ${greeting} ms`);
    await call.feed(callerSpeech, callerSpeech.length / 16 + 20);
    assert.ok(
      await call.until(() => call.events.some((e) => e.type === 'agent_turn' && e.turnId === 't2'), 10_000),
      `agent answered: ${JSON.stringify(call.events.filter((e) => e.type !== 'transcript'))}`,
    );
    const callerTurn = call.events.find((e) => e.type === 'caller_turn');
    assert.equal(
      callerTurn?.type === 'caller_turn' && callerTurn.text,
      'I would like to check the status of my order please.',
    );
    const latency = call.events.find((e) => e.type === 'latency');
    assert.ok(latency && latency.type === 'latency');
    assert.ok(latency.latency.voice_to_voice_ms > 0);
    assert.ok(latency.latency.endpoint_ms >= 0);
    assert.equal(stt.requests.length >= 1, true);
    call.session.stopped();
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'customer-ended-call');
    assert.deepEqual(
      outcome.transcript.map((t) => t.speaker),
      ['agent', 'caller', 'agent'],
    );
    assert.match(outcome.transcript[0]!.text, /Hello Ravi, this is Asha from Acme\./);
    assert.equal(outcome.latency?.turns, 1);
  });

  test('the caller says stop while the agent talks: flush, abort, and the transcript keeps what was heard', async () => {
    const long = {
      ...agent,
      first_message: 'Hello Ravi. '.concat(
        'I am going to read you a very long list of terms and conditions. '.repeat(6),
      ),
    };
    const call = start(long, ['Stop, wait.']);
    assert.ok(await call.until(() => call.carrier.playedMs > 1500, 8000));
    const stop = await speech(tts, 'Stop, wait. Stop.');
    await call.feed(stop, stop.length / 16);
    const interrupted = () =>
      call.events.some((e) => e.type === 'interruption' && e.event.type === 'interrupted');
    assert.ok(
      await call.until(interrupted, 6000),
      JSON.stringify(call.events.filter((e) => e.type === 'interruption')),
    );
    // The agent went quiet at the pause; what was still queued is gone, and the carrier held little of it.
    assert.ok(call.carrier.queuedSamples <= 400 * 16, `${call.carrier.queuedSamples} samples still queued`);
    call.session.stopped();
    const outcome = await call.session.finished;
    const first = outcome.transcript[0]!;
    assert.equal(first.speaker, 'agent');
    assert.equal(first.interrupted, true);
    assert.ok(first.text.length > 0 && first.text.length < long.first_message.length, first.text);
  });

  test('a flow agent moves along its edges and hangs up after its closing words', async () => {
    const checked = validateFlow(
      {
        nodes: [
          {
            id: 'start',
            type: 'startCall',
            data: {
              greeting: 'Hello, are you calling about an order?',
              prompt: 'Ask if it is about an order.',
            },
          },
          { id: 'bye', type: 'endCall', data: { prompt: 'Say goodbye.' } },
        ],
        edges: [
          {
            id: 'e',
            source: 'start',
            target: 'bye',
            data: { label: 'about_order', condition: 'the caller is calling about an order' },
          },
        ],
      },
      [],
    );
    assert.ok(checked.ok);
    const call = start({ ...agent, flow: checked.flow }, [
      'Yes I am calling about my order.',
      'Thank you, bye.',
    ]);
    assert.ok(
      await call.until(() => call.events.some((e) => e.type === 'agent_turn' && e.turnId === 't1'), 8000),
    );
    await call.feed(callerSpeech, callerSpeech.length / 16 + 20);
    assert.ok(
      await call.until(() => call.events.some((e) => e.type === 'transition'), 10_000),
      'took the edge',
    );
    const transition = call.events.find((e) => e.type === 'transition');
    assert.deepEqual(transition && transition.type === 'transition' && [transition.from, transition.to], [
      'start',
      'bye',
    ]);
    await call.until(() => call.events.filter((e) => e.type === 'agent_turn').length >= 2, 10_000);
    const bye = await speech(tts, 'Thank you, bye.');
    await call.feed(bye, bye.length / 16 + 20);
    assert.ok(await call.until(() => call.carrier.ended !== undefined, 10_000), 'the agent hung up');
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'assistant-ended-call');
  });

  test('the call ends at max_duration_secs', async () => {
    const call = start({ ...agent, max_duration_secs: 3, first_message: '' }, ['']);
    await call.feed(null, 3100);
    const outcome = await call.session.finished;
    assert.equal(outcome.reason, 'exceeded-max-duration');
    assert.equal(call.carrier.ended, 'exceeded-max-duration');
  });
});
