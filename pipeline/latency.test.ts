/**
 * Turn latency: the overhead is voice to voice less the wait until the turn was decided, the model's first
 * clause and the TTS first audio, and the account hands out exactly those terms.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallTime } from './call-time.ts';
import { measureTurn } from './latency.ts';
import type { CallerTurn } from './turn/turn-taking.ts';

/** Frames arrived on time from wall 0: call time t ms arrived at wall t ms. */
function callTime(frames: number): CallTime {
  let now = 0;
  const time = new CallTime(() => now);
  for (let i = 1; i <= frames; i++) {
    now = i * 20;
    time.frameArrived();
  }
  return time;
}

const caller = (over: Partial<CallerTurn>): CallerTurn => ({
  type: 'turn_end',
  reason: 'sentence_end',
  atMs: 1160,
  endpointMs: 0,
  requiredMs: 500,
  transcript: 'hello',
  text: 'hello',
  recognized: true,
  speechStartMs: 600,
  speechEndMs: 1000,
  finalAtWallMs: 1160,
  decidedAtWallMs: 1160,
  ...over,
});

test('a turn held after its final: the whole wait until the decision is left out of the overhead', () => {
  const time = callTime(200);
  const timings = {
    requestAtWallMs: 1500,
    firstTokenAtWallMs: 1820,
    firstClauseAtWallMs: 2000,
    firstTtsRequestAtWallMs: 2002,
    firstAudioAtWallMs: 2103,
  };
  const measured = measureTurn(caller({ decidedAtWallMs: 1497 }), timings, time);
  assert.ok(measured);
  const { latency, account } = measured;
  assert.equal(latency.voice_to_voice_ms, 1103);
  assert.equal(latency.stt_final_ms, 160);
  assert.deepEqual(account, { decisionWaitMs: 497, llmFirstClauseMs: 500 });
  // 3 ms from decision to request, 2 ms from first clause to the TTS request.
  assert.equal(latency.pipeline_overhead_ms, 5);
  assert.equal(
    latency.pipeline_overhead_ms,
    latency.voice_to_voice_ms -
      account.decisionWaitMs -
      account.llmFirstClauseMs -
      latency.tts_first_audio_ms,
  );
});

test('no audio, nothing to measure', () => {
  assert.equal(measureTurn(caller({}), { requestAtWallMs: 1200 }, callTime(100)), null);
});
