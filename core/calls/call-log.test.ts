import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallRecord } from '../store/types.ts';
import { callEndedLine } from './call-log.ts';

const ended = {
  id: 'call_01J0000000000000000000000',
  status: 'completed',
  endedReason: 'assistant-ended-call',
  durationSecs: 42,
  costPaise: 210,
  latency: { turns: 3, p50: { voice_to_voice_ms: 812.5, endpoint_ms: 300 }, p95: { voice_to_voice_ms: 990 } },
  error: null,
} as unknown as CallRecord;

test('the call-ended line: id, status, reason, duration, cost in rupees, voice-to-voice p50', () => {
  assert.deepEqual(callEndedLine(ended), {
    call_id: 'call_01J0000000000000000000000',
    status: 'completed',
    ended_reason: 'assistant-ended-call',
    duration_secs: 42,
    cost_inr: 2.1,
    v2v_p50_ms: 812.5,
  });
});

test('a failed call carries its error; a call without measured turns has no p50', () => {
  const failed = {
    ...ended,
    status: 'failed',
    endedReason: 'pipeline-error',
    durationSecs: 0,
    costPaise: 0,
    latency: null,
    error: 'production calls need a carrier account: set TWILIO_ACCOUNT_SID, ...',
  } as unknown as CallRecord;
  assert.deepEqual(callEndedLine(failed), {
    call_id: ended.id,
    status: 'failed',
    ended_reason: 'pipeline-error',
    duration_secs: 0,
    cost_inr: 0,
    v2v_p50_ms: null,
    error: 'production calls need a carrier account: set TWILIO_ACCOUNT_SID, ...',
  });
});
