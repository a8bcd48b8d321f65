/**
 * Sandbox calls that never get media: busy, no answer, carrier failure reported through the ring outcome sink
 * after their rings; hang-ups while ringing; a gateway that cannot be reached or refuses the stream; close.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createTextToSpeech, type VoiceRouter } from '../../../engines/tts/index.ts';
import { startTestGateway, type TestGateway } from '../../testing/harness.ts';
import { MemoryTokenClaims, StreamTokens } from '../../tokens.ts';
import { SandboxCarrier, type SandboxCarrierOptions } from './originate.ts';
import { AgentSide, callTo, capturingLogger, OutcomeLog, sleep } from './testing/callee-harness.ts';

const RING_MS = 300;
const ANSWER_DELAY_MS = 100;

describe('sandbox carrier: ring outcomes', () => {
  let gw: TestGateway;
  let voices: VoiceRouter;
  const agent = new AgentSide();
  const carriers: SandboxCarrier[] = [];
  const carrier = (outcomes: OutcomeLog, options: Partial<SandboxCarrierOptions> = {}) => {
    const made = new SandboxCarrier({
      gatewayUrl: gw.url(''),
      tokens: gw.tokens,
      reportRingOutcome: outcomes.sink,
      ringMs: RING_MS,
      answerDelayMs: ANSWER_DELAY_MS,
      voices,
      logger: pino({ level: 'silent' }),
      ...options,
    });
    carriers.push(made);
    return made;
  };

  before(async () => {
    gw = await startTestGateway({ handlerFactory: agent.factory });
    voices = createTextToSpeech({ espeak: true });
  });
  afterEach(async () => {
    await Promise.all(carriers.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await gw.close();
    await voices.close();
  });

  test('0 busy, 1 no answer after ringMs, 5 carrier failure: reported through the sink, never connected', async () => {
    const outcomes = new OutcomeLog();
    const sandbox = carrier(outcomes);
    const openedBefore = gw.gateway.stats().openedStreams;
    const placedAt = performance.now();
    const placed = await Promise.all([
      sandbox.originate(callTo('call_busy', '+919800000010')),
      sandbox.originate(callTo('call_noanswer', '+919800000011')),
      sandbox.originate(callTo('call_failed', '+919800000015')),
    ]);
    for (const { carrierCallId } of placed) assert.match(carrierCallId, /^CA[0-9a-f]{32}$/);
    assert.equal(new Set(placed.map((p) => p.carrierCallId)).size, 3);
    assert.equal(outcomes.reported.length, 0, 'originate returns before any outcome');
    assert.equal(sandbox.activeCalls, 3);

    const busy = await outcomes.reportOf('call_busy');
    const failed = await outcomes.reportOf('call_failed');
    const noAnswer = await outcomes.reportOf('call_noanswer');
    assert.equal(busy.outcome, 'busy');
    assert.equal(busy.workspaceId, 'ws_sandbox_test');
    assert.equal(failed.outcome, 'carrier_failed');
    assert.match(failed.detail ?? '', /simulated carrier failure/);
    assert.equal(noAnswer.outcome, 'ring_timeout');
    assert.ok(busy.at - placedAt >= ANSWER_DELAY_MS - 5 && busy.at - placedAt < RING_MS);
    assert.ok(
      noAnswer.at - placedAt >= RING_MS - 5,
      `no answer after the ring time (${noAnswer.at - placedAt} ms)`,
    );
    assert.ok(noAnswer.at - placedAt < RING_MS + 200);

    await sleep(200);
    assert.equal(outcomes.reported.length, 3, 'one report per call');
    assert.equal(sandbox.activeCalls, 0);
    assert.equal(gw.gateway.stats().openedStreams, openedBefore, 'no media stream was opened');
  });

  test('hangup while ringing stops the ringing and reports nothing', async () => {
    const outcomes = new OutcomeLog();
    const sandbox = carrier(outcomes);
    const openedBefore = gw.gateway.stats().openedStreams;
    const ringing = await sandbox.originate(callTo('call_ring_hangup', '+919800000021'));
    const answering = await sandbox.originate(callTo('call_answer_hangup', '+919800000023'));
    await sleep(30);
    await sandbox.hangup(ringing.carrierCallId);
    await sandbox.hangup(answering.carrierCallId);
    await sandbox.hangup(answering.carrierCallId);
    await sandbox.hangup('CA00000000000000000000000000000000');
    assert.equal(sandbox.activeCalls, 0);
    await sleep(RING_MS + 100);
    assert.deepEqual(outcomes.reported, []);
    assert.equal(gw.gateway.stats().openedStreams, openedBefore, 'the callee that was to answer never did');
  });

  test('a gateway that cannot be reached or refuses the token: logged, reported as a carrier failure', async () => {
    const outcomes = new OutcomeLog();
    const { logger, lines } = capturingLogger();
    const unreachable = carrier(outcomes, { gatewayUrl: 'ws://127.0.0.1:1', logger });
    await unreachable.originate(callTo('call_unreachable', '+919800000033'));
    const lost = await outcomes.reportOf('call_unreachable');
    assert.equal(lost.outcome, 'carrier_failed');
    assert.match(lost.detail ?? '', /media stream refused/);
    assert.ok(lines.some((l) => l.includes('sandbox media socket error')));

    const foreignTokens = new StreamTokens({
      secret: 'another-deployment-secret-0123456789',
      claims: new MemoryTokenClaims(),
    });
    const refused = carrier(outcomes, { tokens: foreignTokens });
    await refused.originate(callTo('call_refused', '+919800000036'));
    const refusal = await outcomes.reportOf('call_refused');
    assert.equal(refusal.outcome, 'carrier_failed');
    assert.match(refusal.detail ?? '', /4003 token_bad_signature/);
    assert.equal(unreachable.activeCalls + refused.activeCalls, 0);
  });

  test('close ends every call, ringing or connected, without reports; originate then refuses', async () => {
    const outcomes = new OutcomeLog();
    const sandbox = carrier(outcomes, { ringMs: 5000 });
    await sandbox.originate(callTo('call_close_ringing', '+919800000041'));
    await sandbox.originate(callTo('call_close_connected', '+919800000043'));
    await agent.started('call_close_connected');
    await sandbox.close();
    assert.equal(sandbox.activeCalls, 0);
    const stream = await agent.stopped('call_close_connected');
    assert.equal(stream.stop?.reason, 'stop');
    await assert.rejects(sandbox.originate(callTo('call_after_close', '+919800000046')), /closed/);
    await sleep(100);
    assert.deepEqual(outcomes.reported, []);
  });

  test('refuses a call without a destination and a gateway URL that is not ws', async () => {
    const sandbox = carrier(new OutcomeLog());
    await assert.rejects(sandbox.originate({ ...callTo('call_web', '+1'), toNumber: null }), /destination/);
    assert.throws(() => carrier(new OutcomeLog(), { gatewayUrl: 'http://127.0.0.1:1' }), /ws:\/\//);
    assert.throws(() => carrier(new OutcomeLog(), { ringMs: -1 }), RangeError);
  });
});
