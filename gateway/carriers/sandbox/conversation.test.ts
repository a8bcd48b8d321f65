/**
 * The conversing sandbox callee against a real gateway and an agent-like handler that speaks eSpeak lines with
 * marks: the callee answers only once the agent's line has played and paused, marks come back when their audio
 * has played, `clear` drops the queued audio (its mark comes back at once), and the callee hangs up after its
 * script.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createTextToSpeech, type VoiceRouter } from '../../../engines/tts/index.ts';
import { concat, sine } from '../../testing/audio.ts';
import { startTestGateway, type TestGateway } from '../../testing/harness.ts';
import { AGENT_PAUSE_MS } from './behaviour.ts';
import { SandboxCarrier } from './originate.ts';
import { AgentSide, type AgentStream, callTo, OutcomeLog, until } from './testing/callee-harness.ts';

const SOUND_RMS = 100;
const AGENT_LINES = ['Hello, is this Sam?', 'Sure, one moment.', 'Bye now.'];
const CALLER_SCRIPT = ['Yes, speaking.', 'Thanks, goodbye.'];
/** The handler's own endpointing: the callee's turn is over after this much quiet. */
const AGENT_ENDPOINT_MS = 600;

/** Stretches of the callee's sound, split at pauses longer than `gapMs`. */
function utterances(stream: AgentStream, gapMs = 500): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const frame of stream.frames) {
    if (frame.rms <= SOUND_RMS) continue;
    const last = out.at(-1);
    if (last && frame.at - last.end <= gapMs) last.end = frame.at;
    else out.push({ start: frame.at, end: frame.at });
  }
  return out;
}

describe('sandbox carrier: a conversing callee', () => {
  let gw: TestGateway;
  let voices: VoiceRouter;
  let sandbox: SandboxCarrier;
  let agentAudio: Int16Array[];
  const agent = new AgentSide();
  const outcomes = new OutcomeLog();

  before(async () => {
    gw = await startTestGateway({ handlerFactory: agent.factory });
    voices = createTextToSpeech({ espeak: true });
    agentAudio = [];
    for (const text of AGENT_LINES) {
      const chunks: Int16Array[] = [];
      for await (const chunk of voices.synthesize({ voiceId: 'local-en-female', text })) chunks.push(chunk);
      agentAudio.push(concat(chunks));
    }
  });
  afterEach(async () => {
    await sandbox.close();
    agent.behaviour = () => ({});
  });
  after(async () => {
    await gw.close();
    await voices.close();
  });

  const start = async (callerScript?: string[]) => {
    sandbox = new SandboxCarrier({
      gatewayUrl: gw.url(''),
      tokens: gw.tokens,
      reportRingOutcome: outcomes.sink,
      answerDelayMs: 50,
      voices,
      logger: pino({ level: 'silent' }),
      ...(callerScript ? { callerScript } : {}),
    });
    await sandbox.ready();
  };

  test('answers each agent line after it played and paused, acks marks after their audio, hangs up after its script', async () => {
    await start(CALLER_SCRIPT);
    const sent: { at: number; ms: number }[] = [];
    agent.behaviour = (stream) => {
      let calleeTalking = false;
      let lastSound = 0;
      const speak = (): void => {
        const line = agentAudio[sent.length]!;
        stream.ctx.output.sendAudio(line);
        stream.ctx.output.sendMark(`line-${sent.length}`);
        sent.push({ at: performance.now(), ms: line.length / 16 });
      };
      return {
        onStart: speak,
        onFrame(frame) {
          if (frame.rms > SOUND_RMS) {
            calleeTalking = true;
            lastSound = frame.at;
          } else if (calleeTalking && frame.at - lastSound >= AGENT_ENDPOINT_MS) {
            calleeTalking = false;
            if (sent.length < AGENT_LINES.length) speak();
          }
        },
      };
    };
    await sandbox.originate(callTo('call_converse', '+919800000007'));
    const stream = await agent.stopped('call_converse', 20_000);

    assert.equal(stream.stop?.reason, 'stop', 'the callee hung up');
    assert.equal(sent.length, AGENT_LINES.length, 'the agent got a turn after each caller line');
    assert.deepEqual(
      stream.acks.map((a) => [a.name, a.dropped]),
      AGENT_LINES.map((_, i) => [`line-${i}`, false]),
    );
    const said = utterances(stream);
    assert.equal(said.length, CALLER_SCRIPT.length, `the callee spoke its ${CALLER_SCRIPT.length} lines`);
    for (let i = 0; i < AGENT_LINES.length; i++) {
      const line = sent[i]!;
      const ack = stream.acks[i]!;
      const playedMs = ack.at - line.at;
      assert.ok(
        playedMs >= line.ms - 60 && playedMs < line.ms + 300,
        `line ${i}: mark back after its audio played (${playedMs.toFixed(0)} ms for ${line.ms.toFixed(0)} ms)`,
      );
      assert.ok(
        !stream.frames.some((f) => f.rms > SOUND_RMS && f.at > line.at && f.at < ack.at),
        `line ${i}: the callee is silent while the agent talks`,
      );
      const reply = said[i];
      if (reply) {
        const wait = reply.start - ack.at;
        assert.ok(
          wait >= AGENT_PAUSE_MS - 300 && wait < AGENT_PAUSE_MS + 800,
          `line ${i}: the callee answers after the agent's pause (${wait.toFixed(0)} ms after the line played)`,
        );
      }
    }
    const afterLast = stream.stop!.at - stream.acks.at(-1)!.at;
    assert.ok(
      afterLast >= AGENT_PAUSE_MS - 300 && afterLast < AGENT_PAUSE_MS + 800,
      `hangs up once the agent's answer to its last line ended (${afterLast.toFixed(0)} ms)`,
    );
    await until(() => sandbox.activeCalls === 0, 2000, 'the callee to end');
    assert.deepEqual(outcomes.reported, []);
  });

  test('clear drops the queued agent audio and echoes its mark at once; the callee then takes its turn', async () => {
    await start();
    const longLine = sine(16_000, 300, 16_000 * 8, 6000);
    let clearedAt = 0;
    agent.behaviour = (stream) => ({
      onStart() {
        stream.ctx.output.sendAudio(longLine);
        stream.ctx.output.sendMark('long');
        setTimeout(() => {
          clearedAt = performance.now();
          stream.ctx.output.clear();
        }, 800);
      },
      onFrame(frame) {
        if (frame.rms > SOUND_RMS) setTimeout(() => stream.ctx.output.end('agent_done'), 300);
      },
    });
    await sandbox.originate(callTo('call_clear', '+919800000008'));
    const stream = await agent.stopped('call_clear', 6000);
    assert.equal(stream.stop?.reason, 'agent_done');
    assert.deepEqual(
      stream.acks.map((a) => [a.name, a.dropped]),
      [['long', true]],
    );
    const ackDelay = stream.acks[0]!.at - clearedAt;
    assert.ok(ackDelay < 150, `the dropped mark comes back at once (${ackDelay.toFixed(0)} ms)`);
    const firstWord = stream.frames.find((f) => f.rms > SOUND_RMS)!;
    const answeredAfter = firstWord.at - clearedAt;
    assert.ok(
      answeredAfter >= AGENT_PAUSE_MS - 100 && answeredAfter < AGENT_PAUSE_MS + 800,
      `the callee heard the audio stop at the clear and answered (${answeredAfter.toFixed(0)} ms later)`,
    );
  });
});
