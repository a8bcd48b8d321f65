import { paiseToRupees } from '../money.ts';
import type { CallRecord } from '../store/types.ts';

/** The one log line of a call that ended: what an operator reads first when a customer asks about a call. */
export interface CallEndedLine {
  call_id: string;
  status: string;
  ended_reason: string | null;
  duration_secs: number;
  cost_inr: number;
  /** Median voice-to-voice latency over the call's turns; null when no turn was measured. */
  v2v_p50_ms: number | null;
  /** What went wrong, when the platform knows (failed calls). */
  error?: string;
}

export function callEndedLine(call: CallRecord): CallEndedLine {
  return {
    call_id: call.id,
    status: call.status,
    ended_reason: call.endedReason,
    duration_secs: call.durationSecs,
    cost_inr: paiseToRupees(call.costPaise),
    v2v_p50_ms: call.latency?.p50.voice_to_voice_ms ?? null,
    ...(call.error ? { error: call.error } : {}),
  };
}
