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
    v2v_p50_ms: voiceToVoiceP50(call.latency),
    ...(call.error ? { error: call.error } : {}),
  };
}

function voiceToVoiceP50(latency: CallRecord['latency']): number | null {
  const p50 = latency?.p50;
  if (typeof p50 !== 'object' || p50 === null || Array.isArray(p50)) return null;
  const value = (p50 as Record<string, unknown>).voice_to_voice_ms;
  return typeof value === 'number' ? value : null;
}
