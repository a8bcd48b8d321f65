/**
 * Sandbox callees that answer, against a real gateway over the Twilio media route: the answering machine's
 * greeting and beep, the silent callee's real-time silence, the callee that hangs up after 2 s, and a hang-up
 * from our side while connected.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createTextToSpeech, type VoiceRouter } from '../../../engines/tts/index.ts';
import { ToneDetector, type ToneEvent } from '../../../pipeline/voicemail/tone.ts';
import { startTestGateway, type TestGateway, waitForSummary } from '../../testing/harness.ts';
import { BEEP, HANG_UP_AFTER_MS } from './behaviour.ts';
import { SandboxCarrier } from './originate.ts';
import { AgentSide, callTo, OutcomeLog, sleep, until } from './testing/callee-harness.ts';

/** A frame louder than this carries sound; the callees' silence is digital zero. */
const SOUND_RMS = 100;

describe('sandbox carrier: answered calls', () => {
  let gw: TestGateway;
  let voices: VoiceRouter;
  let sandbox: SandboxCarrier;
  let outcomes: OutcomeLog;
  const agent = new AgentSide();

  before(async () => {
    gw = await startTestGateway({ handlerFactory: agent.factory });
    voices = createTextToSpeech({ espeak: true });
  });
  afterEach(async () => {
    await sandbox.close();
    assert.deepEqual(outcomes.reported, [], 'answered calls report no ring outcome');
    agent.behaviour = () => ({});
  });
  after(async () => {
    await gw.close();
    await voices.close();
  });

  const start = async () => {
    outcomes = new OutcomeLog();
    sandbox = new SandboxCarrier({
      gatewayUrl: gw.url(''),
      tokens: gw.tokens,
      reportRingOutcome: outcomes.sink,
      answerDelayMs: 50,
      voices,
      logger: pino({ level: 'silent' }),
    });
    await sandbox.ready();
  };

  test('2 answering machine: a spoken greeting, then a beep the tone detector finds, then silence', async () => {
    await start();
    const tones: ToneEvent[] = [];
    agent.behaviour = (stream) => {
      const detector = new ToneDetector();
      return {
        onFrame() {
          const event = detector.push(stream.frames.at(-1)!.frame, stream.frames.length * 20);
          if (event) tones.push(event);
          const beepEnded = tones.find((t) => t.type === 'tone_ended');
          if (beepEnded && stream.frames.length * 20 >= beepEnded.atMs + 1000)
            stream.ctx.output.end('agent_done');
        },
      };
    };
    const { carrierCallId } = await sandbox.originate(callTo('call_machine', '+919800000002'));
    const stream = await agent.started('call_machine');
    assert.equal(stream.ctx.carrier, 'twilio');
    assert.equal(stream.ctx.carrierCallId, carrierCallId);
    assert.deepEqual(stream.ctx.format, { encoding: 'mulaw', sampleRate: 8000, channels: 1 });
    assert.deepEqual(stream.ctx.customParameters, {}, 'the token is the only parameter');
    await agent.stopped('call_machine', 15_000);

    const started = tones.find((t) => t.type === 'tone_started');
    const ended = tones.find((t) => t.type === 'tone_ended');
    assert.equal(tones.length, 2, 'one tone: the beep, and nothing in the greeting reads as one');
    assert.ok(started?.type === 'tone_started' && Math.abs(started.frequencyHz - BEEP.frequencyHz) < 15);
    assert.ok(ended?.type === 'tone_ended' && Math.abs(ended.durationMs - BEEP.durationMs) <= 60);

    const frameAt = (ms: number) => Math.floor(ms / 20);
    const greeting = stream.frames.slice(0, frameAt(started.startMs));
    const spoken = greeting.filter((f) => f.rms > SOUND_RMS).length * 20;
    assert.ok(spoken > 2000, `the greeting is speech before the beep (${spoken} ms of sound)`);
    const afterBeep = stream.frames.slice(frameAt(ended.atMs) + 2);
    assert.ok(afterBeep.length >= 40, `${afterBeep.length} frames after the beep`);
    assert.ok(
      afterBeep.every((f) => f.rms === 0),
      'silence while the message is recorded',
    );
    assert.equal((await waitForSummary(gw, 'call_machine')).endReason, 'agent_done');
    await until(() => sandbox.activeCalls === 0, 2000, 'the callee to end');
  });

  test('3 silent: silence paced in real time (50 frames a second) until the agent ends the stream', async () => {
    await start();
    agent.behaviour = (stream) => ({
      onStart: () => setTimeout(() => stream.ctx.output.end('agent_hangup'), 2000),
    });
    await sandbox.originate(callTo('call_silent', '+919800000003'));
    const stream = await agent.stopped('call_silent', 5000);
    assert.equal(stream.stop?.reason, 'agent_hangup');
    await until(() => sandbox.activeCalls === 0, 2000, 'the callee to end');

    const frames = stream.frames;
    assert.ok(
      frames.every((f) => f.rms === 0),
      'nothing but silence',
    );
    // At least 2 s of frames (the agent's timer may fire late on a busy host; never running ahead, below, is
    // the upper bound).
    assert.ok(frames.length >= 95, `${frames.length} frames in 2 s`);
    const first = frames[0]!.at;
    const lag = frames.map((f, i) => f.at - first - i * 20);
    // A busy host delays single frames; what must not happen is drift: the last frames are on time again.
    const tail = lag.slice(-10).sort((a, b) => a - b);
    const tailMedian = tail[Math.floor(tail.length / 2)] ?? 0;
    assert.ok(tailMedian < 60, `frames keep to real time (lag at the end ${tailMedian.toFixed(1)} ms)`);
    assert.ok(
      Math.max(...lag) < 250,
      `no frame is held back long (worst lag ${Math.max(...lag).toFixed(1)} ms)`,
    );
    assert.ok(Math.min(...lag) > -60, `and never run ahead (${Math.min(...lag).toFixed(1)} ms)`);
    const summary = await waitForSummary(gw, 'call_silent');
    assert.equal(summary.inbound.rateLimited, 0);
    assert.deepEqual(
      summary.inbound.bad,
      Object.fromEntries(Object.keys(summary.inbound.bad).map((k) => [k, 0])),
    );
  });

  test('4 hangs up 2 s after answering with a Twilio stop', async () => {
    await start();
    await sandbox.originate(callTo('call_hangs_up', '+919800000004'));
    const stream = await agent.stopped('call_hangs_up', 5000);
    assert.equal(stream.stop?.reason, 'stop');
    assert.equal(stream.stop?.closeCode, 1000);
    const onLine = stream.stop!.at - stream.startedAt;
    assert.ok(Math.abs(onLine - HANG_UP_AFTER_MS) < 250, `on the line ${onLine.toFixed(0)} ms`);
    assert.ok(Math.abs(stream.frames.length - HANG_UP_AFTER_MS / 20) <= 5, `${stream.frames.length} frames`);
    await until(() => sandbox.activeCalls === 0, 2000, 'the callee to end');
  });

  test('hangup while connected sends stop and closes the stream', async () => {
    await start();
    const { carrierCallId } = await sandbox.originate(callTo('call_hangup_live', '+919800000013'));
    const stream = await agent.started('call_hangup_live');
    await sleep(200);
    const hungUpAt = performance.now();
    await sandbox.hangup(carrierCallId);
    assert.equal(sandbox.activeCalls, 0);
    await agent.stopped('call_hangup_live', 2000);
    assert.equal(stream.stop?.reason, 'stop');
    assert.ok(stream.stop!.at - hungUpAt < 500);
    const framesAtStop = stream.frames.length;
    await sleep(100);
    assert.equal(stream.frames.length, framesAtStop, 'no media after the stop');
  });
});
