/**
 * The sandbox carrier's parts on their own: the magic-number table, Twilio-like playback (marks, clear), the
 * machine's beep as the pipeline's tone detector hears it, the drift-free frame clock, and the conversing
 * callee's turn-taking in simulated time (a fake TTS engine, 20 ms ticks without waiting).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { mulawDecode, Resampler } from '../../../codecs/index.ts';
import { VoiceCatalogue, VoiceRouter } from '../../../engines/tts/index.ts';
import { ToneDetector } from '../../../pipeline/voicemail/tone.ts';
import { sine } from '../../testing/audio.ts';
import { AGENT_PAUSE_MS, BEEP, behaviourFor, GOODBYE_WAIT_MS, SILENT_AGENT_PROMPT_MS } from './behaviour.ts';
import {
  type CarrierFrames,
  PreparedSpeech,
  SILENCE_FRAME,
  silenceFrames,
  toCarrierFrames,
  toneFrames,
} from './callee-audio.ts';
import { ScriptedConversation } from './conversation.ts';
import { FrameClock } from './frame-clock.ts';
import { Mouth } from './mouth.ts';
import { AgentPlayback, FRAME_SAMPLES, MULAW_SILENCE, type PlayedFrame } from './playback.ts';

describe('magic numbers', () => {
  test('the last digit decides; any other ending converses', () => {
    assert.equal(behaviourFor('+919800000000'), 'busy');
    assert.equal(behaviourFor('+919800000001'), 'no_answer');
    assert.equal(behaviourFor('+919800000002'), 'answering_machine');
    assert.equal(behaviourFor('+919800000003'), 'silent');
    assert.equal(behaviourFor('+919800000004'), 'hangs_up');
    assert.equal(behaviourFor('+919800000005'), 'carrier_failure');
    for (const n of ['+919800000006', '+919800000009', '+1 (415) 555-0107'])
      assert.equal(behaviourFor(n), 'converse');
    assert.equal(behaviourFor('+91 98000 00002 '), 'answering_machine', 'trailing non-digits are ignored');
    assert.equal(behaviourFor('sip:alice'), 'converse');
  });
});

describe('agent playback', () => {
  const bytes = (n: number, value: number) => new Uint8Array(n).fill(value);

  test('plays 20 ms per frame in order, completes with silence, echoes a mark once its audio played', () => {
    const playback = new AgentPlayback();
    playback.enqueue(bytes(250, 1));
    playback.mark('a');
    playback.enqueue(bytes(100, 2));
    playback.mark('b');
    assert.equal(playback.queuedMs, 43.75);

    const first = playback.playFrame();
    assert.equal(first.agentSamples, FRAME_SAMPLES);
    assert.deepEqual(first.marks, []);
    const second = playback.playFrame();
    assert.deepEqual(second.marks, ['a'], 'a: its 250 samples ended within the second frame');
    assert.deepEqual([...second.audio.subarray(0, 90)], [...bytes(90, 1)]);
    assert.deepEqual([...second.audio.subarray(90)], [...bytes(70, 2)]);
    const third = playback.playFrame();
    assert.equal(third.agentSamples, 30);
    assert.deepEqual(third.marks, ['b']);
    assert.ok(third.audio.subarray(30).every((b) => b === MULAW_SILENCE));
    const idle = playback.playFrame();
    assert.equal(idle.agentSamples, 0);
    assert.deepEqual(idle.marks, []);
  });

  test('a mark with nothing before it is echoed on the next frame', () => {
    const playback = new AgentPlayback();
    playback.mark('now');
    assert.deepEqual(playback.playFrame().marks, ['now']);
  });

  test('clear drops the queue and hands back the pending marks', () => {
    const playback = new AgentPlayback();
    playback.enqueue(bytes(8000, 1));
    playback.mark('x');
    playback.enqueue(bytes(800, 1));
    playback.mark('y');
    playback.playFrame();
    assert.deepEqual(playback.clear(), ['x', 'y']);
    assert.equal(playback.queuedMs, 0);
    const next = playback.playFrame();
    assert.equal(next.agentSamples, 0);
    assert.deepEqual(next.marks, []);
  });
});

describe('callee audio', () => {
  const heardByPipeline = (frames: readonly Uint8Array[]) => {
    const upsampler = new Resampler(8000, 16_000);
    return frames.map((f) => upsampler.process(mulawDecode(f)));
  };

  test('the machine beep is a tone the pipeline detector finds, at its frequency and length', () => {
    const frames = [...toneFrames(BEEP), SILENCE_FRAME, SILENCE_FRAME];
    assert.equal(frames.length, BEEP.durationMs / 20 + 2);
    const detector = new ToneDetector();
    const events = heardByPipeline(frames)
      .map((frame, i) => detector.push(frame, (i + 1) * 20))
      .filter((e) => e !== null);
    assert.equal(events.length, 2);
    const [started, ended] = events;
    assert.ok(started?.type === 'tone_started' && Math.abs(started.frequencyHz - BEEP.frequencyHz) < 10);
    assert.ok(ended?.type === 'tone_ended' && Math.abs(ended.durationMs - BEEP.durationMs) <= 40);
  });

  test('TTS audio at 16 kHz becomes whole 160-byte mu-law frames at 8 kHz', () => {
    const second = new Int16Array(16_000).map((_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)),
    );
    const frames = toCarrierFrames([second.subarray(0, 7000), second.subarray(7000)]);
    assert.ok(frames.length === 51 || frames.length === 50, `${frames.length} frames`);
    assert.ok(frames.every((f) => f.length === FRAME_SAMPLES));
    const decoded = mulawDecode(frames[10] as Uint8Array);
    const peak = Math.max(...decoded);
    assert.ok(peak > 7000 && peak < 9000, `level kept (${peak})`);
  });
});

describe('frame clock', () => {
  test('keeps to wall-clock time without drift', async () => {
    const ticks: { index: number; at: number }[] = [];
    const clock = new FrameClock(20, (index) => ticks.push({ index, at: performance.now() }));
    const start = performance.now();
    clock.start();
    await new Promise((resolve) => setTimeout(resolve, 1010));
    clock.stop();
    assert.ok(ticks.length >= 50 && ticks.length <= 52, `${ticks.length} ticks in 1 s`);
    assert.deepEqual(
      ticks.map((t) => t.index),
      ticks.map((_, i) => i),
    );
    const last = ticks.at(-1)!;
    assert.ok(last.at - start >= last.index * 20 - 1, 'never early');
    assert.ok(last.at - start - last.index * 20 < 15, 'no accumulated lateness');
  });

  test('skips what it cannot catch up after a stall', async () => {
    const indices: number[] = [];
    const clock = new FrameClock(
      20,
      (index) => {
        indices.push(index);
        if (index === 2) {
          const until = performance.now() + 300;
          while (performance.now() < until) {}
        }
      },
      5,
    );
    clock.start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    clock.stop();
    const jump = indices.findIndex((v, i) => i > 0 && v !== (indices[i - 1] as number) + 1);
    assert.ok(jump > 0, 'a stall of 15 ticks with a catch-up of 5 skips some');
    assert.ok((indices.at(-1) as number) >= 19, 'the index still counts real time');
  });
});

describe('scripted conversation, in simulated time', () => {
  /** Every line "spoken" by the fake engine: 300 ms of a 200 Hz tone. */
  const LINE_MS = 300;
  const voices = new VoiceRouter(VoiceCatalogue.load(), {
    espeak: {
      provider: 'fake',
      capabilities: { streaming: false },
      async *synthesize() {
        yield sine(16_000, 200, (16_000 * LINE_MS) / 1000, 6000);
      },
    },
  });
  const agentSpeech = toneFrames({ frequencyHz: 250, durationMs: 1000, level: 0.2 });
  const silence: PlayedFrame = { audio: SILENCE_FRAME, agentSamples: 0, marks: [] };

  /**
   * Runs the conversation tick by tick. The agent says `agentSpeech` at the start and after each of the callee's
   * lines when `agentTurnsAfter` says so.
   */
  async function simulate(
    script: string[],
    agentTurnsAfter: (event: 'start' | 'line') => boolean,
    untilMs: number,
  ) {
    const speech = new PreparedSpeech(voices, pino({ level: 'silent' }));
    ScriptedConversation.prepare(speech, script);
    await speech.settled();
    const mouth = new Mouth();
    const events: { ms: number; what: string }[] = [];
    let hungUp = false;
    const conversation = new ScriptedConversation(script, {
      mouth,
      speech,
      hangUp: () => {
        hungUp = true;
      },
    });
    let agentPlaying: CarrierFrames = [];
    let wasSpeaking = false;
    for (let ms = 0; ms < untilMs && !hungUp; ms += 20) {
      const heard = agentPlaying.length > 0 ? { ...silence, audio: agentPlaying[0]! } : silence;
      agentPlaying = agentPlaying.slice(1);
      conversation.tick(heard, ms);
      if (hungUp) events.push({ ms, what: 'hang_up' });
      if (mouth.speaking && !wasSpeaking) {
        events.push({ ms, what: 'line' });
        if (agentTurnsAfter('line')) agentPlaying = [...silenceFrames(LINE_MS + 400), ...agentSpeech];
      }
      wasSpeaking = mouth.speaking;
      mouth.next();
      if (ms === 0 && agentTurnsAfter('start')) agentPlaying = agentSpeech;
    }
    return events;
  }

  test('a line after each agent turn and its pause, a hang-up after the answer to the last', async () => {
    const events = await simulate(['one', 'two'], () => true, 20_000);
    assert.deepEqual(
      events.map((e) => e.what),
      ['line', 'line', 'hang_up'],
    );
    // The agent's 1 s line starts at 20 ms; the callee answers AGENT_PAUSE_MS after it ends.
    const first = events[0]!.ms;
    assert.ok(Math.abs(first - (20 + 1000 + AGENT_PAUSE_MS)) <= 60, `first line at ${first} ms`);
    const second = events[1]!.ms - first;
    assert.ok(
      Math.abs(second - (LINE_MS + 400 + 1000 + AGENT_PAUSE_MS)) <= 60,
      `second line ${second} ms later`,
    );
  });

  test('speaks first when the agent says nothing, and hangs up when the agent never answers', async () => {
    const events = await simulate(['only'], () => false, 20_000);
    assert.deepEqual(
      events.map((e) => e.what),
      ['line', 'hang_up'],
    );
    assert.equal(events[0]!.ms, SILENT_AGENT_PROMPT_MS);
    const waited = events[1]!.ms - events[0]!.ms - LINE_MS;
    assert.ok(Math.abs(waited - GOODBYE_WAIT_MS) <= 60, `hung up ${waited} ms after its last line`);
  });

  test('an empty script hangs up once the agent has spoken', async () => {
    const events = await simulate([], (event) => event === 'start', 20_000);
    assert.deepEqual(
      events.map((e) => e.what),
      ['hang_up'],
    );
    assert.ok(Math.abs(events[0]!.ms - (20 + 1000 + AGENT_PAUSE_MS)) <= 60);
  });
});
