/** The call object: every field of the interface's Call table, nulls while live, rupees, never `variables`. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallRecord } from '../store/types.ts';
import { callObject } from './representation.ts';

/** A turn's latency figures, voice to voice `ms`. */
const turn = (ms: number) => ({
  endpoint_ms: 300,
  stt_final_ms: 120,
  llm_first_token_ms: 200,
  tts_first_audio_ms: 80,
  voice_to_voice_ms: ms,
  pipeline_overhead_ms: 4,
});

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const queued: CallRecord = {
  id: 'call_01JAAAAAAAAAAAAAAAAAAAAAAA',
  workspaceId: 'ws_01JAAAAAAAAAAAAAAAAAAAAAAA',
  agentId: 'agt_01JAAAAAAAAAAAAAAAAAAAAAAA',
  agentRevision: 3,
  channel: 'phone',
  toNumber: '+919812345678',
  fromNumber: null,
  tier: 't3',
  perMinPaise: 300,
  maxDurationSecs: 300,
  variables: { customer_name: 'Ravi', otp: '4321' },
  webhookUrl: 'https://hooks.example.com/calls',
  campaignId: null,
  phoneNumberId: null,
  poolId: null,
  direction: 'outbound',
  status: 'queued',
  endedReason: null,
  carrier: null,
  carrierCallId: null,
  gatewayNode: null,
  createdAt: T0,
  dialingAt: null,
  answeredAt: null,
  endedAt: null,
  durationSecs: 0,
  costPaise: 0,
  transcriptAvailable: false,
  recordingAvailable: false,
  analysis: null,
  latency: null,
  error: 'internal note',
};

test('a queued call: live fields null, zero duration and cost, the rate in rupees', () => {
  assert.deepEqual(callObject(queued), {
    id: queued.id,
    object: 'call',
    agent_id: queued.agentId,
    to: '+919812345678',
    status: 'queued',
    ended_reason: null,
    started_at: null,
    ended_at: null,
    duration_secs: 0,
    cost: { amount_inr: 0, per_min_inr: 3 },
    tier: 't3',
    transcript_available: false,
    recording_available: false,
    channel: 'phone',
    direction: 'outbound',
    from: null,
    max_duration_secs: 300,
    created_at: '2026-03-01T10:00:00.000Z',
    analysis: null,
    latency: null,
  });
});

test('a completed call from a pool, with artifacts, analysis and latency', () => {
  const completed: CallRecord = {
    ...queued,
    status: 'completed',
    endedReason: 'assistant-ended-call',
    poolId: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA',
    fromNumber: '+918000000001',
    dialingAt: T0 + 1_000,
    answeredAt: T0 + 5_000,
    endedAt: T0 + 67_250,
    durationSecs: 63,
    costPaise: 315,
    transcriptAvailable: true,
    recordingAvailable: true,
    analysis: { summary: 'Confirmed the order' },
    latency: { turns: 4, p50: turn(640), p95: turn(990) },
  };
  const object = callObject(completed);
  assert.equal(object.started_at, '2026-03-01T10:00:05.000Z');
  assert.equal(object.ended_at, '2026-03-01T10:01:07.250Z');
  assert.equal(object.duration_secs, 63);
  assert.deepEqual(object.cost, { amount_inr: 3.15, per_min_inr: 3 });
  assert.equal(object.calls_from_source, 'pool');
  assert.equal(object.pool_id, completed.poolId);
  assert.equal(object.from, '+918000000001');
  assert.equal(object.ended_reason, 'assistant-ended-call');
  assert.deepEqual(object.analysis, { summary: 'Confirmed the order' });
  assert.deepEqual(object.latency, { turns: 4, p50: turn(640), p95: turn(990) });
});

test('never variables, the webhook URL, internal errors or carrier details', () => {
  const text = JSON.stringify(
    callObject({ ...queued, carrier: 'twilio', carrierCallId: 'CA123', gatewayNode: 'gw-7' }),
  );
  for (const hidden of [
    'Ravi',
    '4321',
    'variables',
    'hooks.example.com',
    'internal note',
    'CA123',
    'gw-7',
    'ws_',
  ]) {
    assert.ok(!text.includes(hidden), hidden);
  }
});

test('a call that never connected reports 0 seconds whatever was stored', () => {
  const object = callObject({ ...queued, status: 'no_answer', endedAt: T0 + 60_000, durationSecs: 9 });
  assert.equal(object.duration_secs, 0);
  assert.equal(object.started_at, null);
  assert.equal(object.ended_at, '2026-03-01T10:01:00.000Z');
});
