/**
 * Barge-in end to end, with real speech (eSpeak NG) as caller frames: a caller who talks over a reply stops it
 * within 100 ms of call time of the decision and the model's context keeps only what was heard; backchannels
 * ("haan", "ok", "hmm") do not stop the agent; a cough with no words leaves the reply playing, without a hole. The model is the OpenAI-compatible provider against a fake server on loopback (its requests show
 * the context), or the scripted dialog engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { AgentSettings } from '../core/agents/types.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';
import { DeepgramTranscriber } from '../engines/stt/providers/deepgram.ts';
import { FAKE_ENDPOINTING_MS } from '../engines/stt/testing/fake-deepgram-recognizer.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import type { VadStream, VoiceActivityDetector } from '../engines/vad/types.ts';
import { CUT_OFF_MARK } from './heard-context.ts';
import type { Speaker } from './reply.ts';
import { coughLike, silence, speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { RecordingSpeaker, type Synthesis } from './testing/recording-speaker.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';
import { BACKCHANNEL_MAX_MS } from './turn/interruption.ts';

const REPLY =
  'Your order left our warehouse in Ahmedabad on Monday morning. It is now with the courier in Mumbai. ' +
  'The courier plans to deliver it on Thursday between ten and two. You will get a message with the tracking ' +
  'link before it arrives. If nobody is home, the courier will try again on Friday. You can also pick it up ' +
  'from the nearest collection point with your order number.';
const BARGE_IN = 'Actually I want to change my delivery address instead.';
/** Words a second a slow model writes: the reply is still being written when the caller cuts in. */
const SLOW_TOKENS_PER_SECOND = 12;
/** How much of the reply the caller hears before cutting in. */
const HEARD_BEFORE_BARGE_IN_MS = 2500;
/** The brief: no agent audio of the interrupted turn plays more than this after the decision. */
const STOP_WITHIN_MS = 100;

const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe('barge-in with real speech', () => {
  let engines: LocalEngines;
  before(async () => {
    engines = await localEngines();
  });
  after(() => engines.close());

  /** A call on the OpenAI-compatible model at `llm`: the greeting plays, then the caller asks a question. */
  async function orderQuestion(
    llm: FakeOpenAiServer,
    speaker: Speaker = engines.tts,
    agent: AgentSettings = testAgent({ first_message: 'Hello {{name}}.' }),
  ): Promise<CallHarness> {
    const call = new CallHarness({
      agent,
      stt: engines.sttServer,
      engines: {
        llm: new OpenAiChatModel({ baseURL: llm.baseURL, apiKey: 'test', model: 'fake-model' }),
        stt: engines.stt,
        vad: engines.vad,
        speaker,
      },
    }).start();
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, 'Where is my order?'), 'Where is my order?');
    return call;
  }

  test('the agent stops within 100 ms of the interruption and the model hears only what the caller heard', async () => {
    const llm = await FakeOpenAiServer.start({
      reply: (_body, n) =>
        n === 0
          ? { text: REPLY, tokensPerSecond: SLOW_TOKENS_PER_SECOND }
          : { text: 'Sure, what is the new address?' },
    });
    try {
      const speaker = new RecordingSpeaker(engines.tts);
      const call = await orderQuestion(llm, speaker);
      const heard = () => call.carrier.turns.get('t2')?.samples ?? 0;
      assert.ok(await call.until(() => heard() >= HEARD_BEFORE_BARGE_IN_MS * 16, ENGINE_WAIT_MS), call.log());
      await call.say(await speech(engines.tts, BARGE_IN), BARGE_IN);
      const interrupted = () => call.first('interruption', (e) => e.event.type === 'interrupted');
      assert.ok(await call.until(() => interrupted() !== undefined, ENGINE_WAIT_MS), call.log());
      assert.ok(await call.until(() => llm.requests.length >= 2, ENGINE_WAIT_MS), call.log());

      const decision = interrupted()!;
      assert.equal(decision.event.turnId, 't2');
      const playback = call.carrier.turns.get('t2')!;
      assert.ok(
        playback.lastAtMs <= decision.atMs + STOP_WITHIN_MS,
        `agent audio played until ${playback.lastAtMs} ms, the interruption was decided at ${decision.atMs} ms`,
      );

      // The next request: [..., user "Where is my order?", assistant <heard>, user <barge-in>].
      const messages = llm.requests[1]!.body!.messages!;
      assert.equal(messages.at(-1)?.role, 'user');
      assert.equal(messages.at(-1)?.content, BARGE_IN);
      const said = messages.at(-2)!;
      assert.equal(said.role, 'assistant');
      const content = String(said.content);
      assert.ok(content.endsWith(CUT_OFF_MARK), content);
      const kept = words(content.slice(0, -CUT_OFF_MARK.length));
      assert.deepEqual(kept, words(REPLY).slice(0, kept.length), 'a prefix of the reply');
      assert.ok(kept.length > 0 && kept.length < words(REPLY).length, content);
      // As many words as the audio played holds: clause by clause, the one cut off by its share of time.
      const expected = wordsHeard(speaker.syntheses.slice(1), playback.samples);
      assert.ok(Math.abs(kept.length - expected) <= 2, `${kept.length} words kept, ${expected} heard`);

      call.session.stopped();
      const outcome = await call.session.finished;
      const cut = outcome.transcript.find((t) => t.speaker === 'agent' && t.interrupted);
      assert.equal(cut?.text, kept.join(' '));
    } finally {
      await llm.close();
    }
  });

  test('speech that cuts a reply off but has no words gets the answer again once the caller is quiet', async () => {
    const llm = await FakeOpenAiServer.start({
      reply: (_body, n) =>
        n === 0
          ? { text: REPLY, tokensPerSecond: SLOW_TOKENS_PER_SECOND }
          : { text: 'Sorry, as I was saying, your order arrives on Thursday.' },
    });
    try {
      const call = await orderQuestion(llm);
      const heard = () => call.carrier.turns.get('t2')?.samples ?? 0;
      assert.ok(await call.until(() => heard() >= 1000 * 16, ENGINE_WAIT_MS), call.log());
      // The caller talks to someone else in the room: long speech the STT gives no words for.
      const aside = 'Just put it on the table there, I will look at it after this call is over.';
      await call.say(await speech(engines.tts, aside), '');
      const cut = call.first('interruption', (e) => e.event.type === 'interrupted');
      assert.equal(cut?.event.event.reason, 'sustained_speech', call.log());

      assert.ok(await call.until(() => call.spoke('t3'), ENGINE_WAIT_MS), call.log());
      const again = call.first('reanswer');
      assert.equal(again?.event.turnId, 't2', call.log());
      assert.equal(call.all('caller_turn').length, 1, 'the aside is not a turn');
      assert.equal(llm.requests.length, 2);
      const messages = llm.requests[1]!.body!.messages!;
      assert.equal(messages.at(-1)?.role, 'assistant', 'what was heard of the cut reply is kept');
      assert.ok(String(messages.at(-1)?.content).endsWith(CUT_OFF_MARK));
      call.session.stopped();
      await call.session.finished;
    } finally {
      await llm.close();
    }
  });

  test('the agent answers again at most twice in a row; then it waits for words', async () => {
    const llm = await FakeOpenAiServer.start({
      reply: () => ({ text: REPLY, tokensPerSecond: SLOW_TOKENS_PER_SECOND }),
    });
    try {
      // Re-prompts off: the silence below is about re-answers, which a re-prompt would be mistaken for.
      const quietAgent = testAgent({ first_message: 'Hello {{name}}.' });
      quietAgent.behavior.silence_reprompt_secs = 0;
      const call = await orderQuestion(llm, engines.tts, quietAgent);
      const television = await speech(
        engines.tts,
        'And now the weather for the coming weekend across the north.',
      );
      const playing = (turnId: string) => (call.carrier.turns.get(turnId)?.samples ?? 0) >= 1000 * 16;
      for (const turnId of ['t2', 't3', 't4']) {
        assert.ok(await call.until(() => playing(turnId), ENGINE_WAIT_MS), `${turnId}: ${call.log()}`);
        await call.say(television, '');
      }
      // Long past the point of a third re-answer: none comes.
      await call.feed(null, 8000);
      assert.deepEqual(
        call.all('reanswer').map((e) => e.event.turnId),
        ['t2', 't3'],
        call.log(),
      );
      assert.equal(call.carrier.turns.get('t5'), undefined, call.log());
      // Words reset the count: the caller is answered as usual.
      await call.say(await speech(engines.tts, 'Hello, are you there?'), 'Hello, are you there?');
      assert.ok(await call.until(() => playing('t5'), ENGINE_WAIT_MS), call.log());
      call.session.stopped();
      await call.session.finished;
    } finally {
      await llm.close();
    }
  });

  test('backchannels ("haan", "ok", "hmm") do not stop the agent: the reply plays to its end', async () => {
    const opening =
      'Hello Ravi. I am calling about your recent order from Acme. It was packed yesterday and it left ' +
      'our warehouse this morning. The courier will deliver it tomorrow afternoon. Please keep your phone ' +
      'nearby, because the courier may call you before arriving.';
    const speaker = new RecordingSpeaker(engines.tts);
    const call = new CallHarness({
      agent: testAgent({ first_message: opening }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker },
    }).start();
    const playedMs = () => (call.carrier.turns.get('t1')?.samples ?? 0) / 16;
    for (const [word, atMs] of [
      ['haan', 1500],
      ['ok', 5000],
      ['hmm', 8500],
    ] as const) {
      assert.ok(await call.until(() => playedMs() >= atMs, ENGINE_WAIT_MS), call.log());
      await call.say(await speech(engines.tts, word), word);
    }
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());

    const episodes = call.all('interruption').map((e) => e.event.event);
    assert.ok(
      episodes.some((e) => e.type === 'heard'),
      `the caller's speech was heard: ${call.log()}`,
    );
    assert.equal(episodes.filter((e) => e.type === 'interrupted').length, 0, call.log());
    assert.deepEqual(call.carrier.clears, [], 'nothing was flushed');
    assert.equal(call.all('caller_turn').length, 0, 'backchannels are not turns');
    const full = speaker.audioOf(opening);
    assert.deepEqual(call.carrier.audioOf('t1'), full, 'every sample of the reply played, once, in order');
    call.session.stopped();
    const outcome = await call.session.finished;
    assert.equal(outcome.transcript[0]?.interrupted, false);
  });

  test('a cough with no words is heard but holds nothing back: the reply plays on without a gap', async () => {
    const opening =
      'Hello Ravi. I am calling from Acme about the delivery of your order. The courier will arrive ' +
      'tomorrow between ten in the morning and two in the afternoon. Please keep your phone nearby.';
    const speaker = new RecordingSpeaker(engines.tts);
    const call = new CallHarness({
      agent: testAgent({ first_message: opening }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker },
    }).start();
    const playedMs = () => (call.carrier.turns.get('t1')?.samples ?? 0) / 16;
    assert.ok(await call.until(() => playedMs() >= 1500, ENGINE_WAIT_MS), call.log());
    await call.say(coughLike(), '');
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());

    const episodes = call.all('interruption').map((e) => e.event.event);
    assert.deepEqual(
      episodes.map((e) => `${e.type}:${e.reason}`),
      ['heard:caller_speech', 'resumed:false_interruption'],
    );
    assert.deepEqual(call.carrier.clears, []);
    const full = speaker.audioOf(opening);
    assert.deepEqual(call.carrier.audioOf('t1'), full, 'every sample, once, in order');
    assert.equal(call.all('caller_turn').length, 0);
    call.session.stopped();
    await call.session.finished;
  });

  test('a burst of noise is not speech: the reply is not even paused', async () => {
    const { whiteNoise } = await import('../engines/vad/testing/speech.ts');
    const opening = 'Hello Ravi. I am calling from Acme about the delivery of your order tomorrow.';
    const call = new CallHarness({
      agent: testAgent({ first_message: opening }),
      stt: engines.sttServer,
      engines: { llm: new ScriptedDialogModel(), stt: engines.stt, vad: engines.vad, speaker: engines.tts },
    }).start();
    assert.ok(await call.until(() => (call.carrier.turns.get('t1')?.samples ?? 0) >= 16_000, ENGINE_WAIT_MS));
    await call.say(whiteNoise(400, -20), '');
    await call.feed(silence(200));
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    assert.equal(call.all('interruption').length, 0, call.log());
    call.session.stopped();
    await call.session.finished;
  });
});

/**
 * A VAD that answers `lagFrames` frames late (20 ms each), in call time: a detector behind on a busy node.
 * Its probabilities are the real ones, in order.
 */
class LaggingVad implements VoiceActivityDetector {
  constructor(
    private readonly inner: VoiceActivityDetector,
    private readonly lagFrames: number,
  ) {}
  get name(): string {
    return this.inner.name;
  }
  get windowSamples(): number {
    return this.inner.windowSamples;
  }
  createStream(): VadStream {
    const stream = this.inner.createStream();
    const held: Array<() => void> = [];
    const lag = this.lagFrames;
    return {
      push(frame) {
        const result = stream.push(frame);
        const gate = new Promise<void>((release) => held.push(release));
        if (held.length > lag) held.shift()?.();
        return Promise.all([result, gate]).then(([probabilities]) => probabilities);
      },
      reset: () => stream.reset(),
    };
  }
}

describe('barge-in on a streaming STT ahead of the VAD', () => {
  let engines: LocalEngines;
  before(async () => {
    engines = await localEngines();
  });
  after(() => engines.close());

  test('interim words that come before a late VAD stop the agent as soon as it confirms the voice', async () => {
    const opening =
      'Hello Ravi. I am calling from Acme about the delivery of your order. The courier will arrive ' +
      'tomorrow between ten in the morning and two in the afternoon. Please keep your phone nearby.';
    // The fake STT names the first half of the words 300 ms into the speech; the VAD tells 400 ms late.
    const lagMs = 400;
    const stt = await FakeDeepgramServer.start({ transcripts: [BARGE_IN] });
    try {
      const call = new CallHarness({
        agent: testAgent({ first_message: opening }),
        engines: {
          llm: new ScriptedDialogModel(),
          stt: new DeepgramTranscriber({ baseUrl: stt.baseUrl, endpointingMs: FAKE_ENDPOINTING_MS }),
          vad: new LaggingVad(engines.vad, lagMs / 20),
          speaker: engines.tts,
        },
      }).start();
      const playedMs = () => (call.carrier.turns.get('t1')?.samples ?? 0) / 16;
      assert.ok(await call.until(() => playedMs() >= 1500, ENGINE_WAIT_MS), call.log());
      const onsetMs = call.nowMs;
      await call.say(await speech(engines.tts, BARGE_IN), BARGE_IN);
      const cut = call.first('interruption', (e) => e.event.type === 'interrupted');
      const heard = call.first('interruption', (e) => e.event.type === 'heard');
      assert.ok(cut !== undefined && heard !== undefined, call.log());
      // The words were in when the VAD confirmed the voice: the agent stopped then, not once voice alone
      // (650 ms, counted by the same late VAD) or the final would have stopped it.
      assert.equal(cut.event.event.reason, 'min_duration', call.log());
      assert.ok(cut.event.event.evidence.words.length > 0, call.log());
      assert.equal(cut.atMs, heard.atMs, call.log());
      assert.ok(cut.atMs - onsetMs < BACKCHANNEL_MAX_MS + lagMs, `stopped ${cut.atMs - onsetMs} ms in`);
      const playback = call.carrier.turns.get('t1');
      assert.ok(playback !== undefined && playback.lastAtMs <= cut.atMs + STOP_WITHIN_MS, call.log());
      call.session.stopped();
      await call.session.finished;
    } finally {
      await stt.close();
    }
  });
});

/** Words a caller heard in `samples` of a reply spoken as these clauses: whole ones, then a share of the next. */
function wordsHeard(clauses: readonly Synthesis[], samples: number): number {
  let left = samples;
  let count = 0;
  for (const clause of clauses) {
    const n = words(clause.text).length;
    if (left >= clause.samples) {
      count += n;
      left -= clause.samples;
      continue;
    }
    return count + Math.floor((n * left) / clause.samples);
  }
  return count;
}
