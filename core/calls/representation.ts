import { isoTime } from '../clock.ts';
import { paiseToRupees } from '../money.ts';
import type { CallLatency } from '../store/call-latency.ts';
import type { CallChannel, CallDirection, CallRecord, CallStatus, JsonObject } from '../store/types.ts';

/**
 * The call object of the API: exactly what `GET /v2/calls/{id}` returns and what `data.call` of every webhook
 * event carries at that moment (interface "Call (v2)"). The interface's fields first, in its order, then the
 * fields this platform adds (the envelope and the object are additive). `variables` never appear here.
 */
export interface CallObject {
  id: string;
  object: 'call';
  agent_id: string;
  to: string | null;
  status: CallStatus;
  /** Null while the call is live. */
  ended_reason: string | null;
  /** When media went live; null when the call never connected. */
  started_at: string | null;
  /** Null while the call is live. */
  ended_at: string | null;
  /** Seconds media was live, per started second; 0 when never connected. */
  duration_secs: number;
  cost: { amount_inr: number; per_min_inr: number };
  tier: string;
  transcript_available: boolean;
  recording_available: boolean;
  /** `pool` (with `pool_id`) when a pool picked the number; absent otherwise. */
  calls_from_source?: 'pool';
  pool_id?: string;
  channel: CallChannel;
  /** `inbound` when a caller rang one of the workspace's numbers (`to` is that number, `from` the caller). */
  direction: CallDirection;
  from: string | null;
  /** The number the call rings from, when it rings from one of the workspace's numbers. */
  phone_number_id?: string;
  /** The campaign that placed the call; absent for single calls. */
  campaign_id?: string;
  max_duration_secs: number;
  created_at: string;
  /** The post-call analysis; null until it is ready. */
  analysis: JsonObject | null;
  /** The call's latency summary as the pipeline recorded it; null until a turn was measured. */
  latency: CallLatency | null;
}

export function callObject(call: CallRecord): CallObject {
  return {
    id: call.id,
    object: 'call',
    agent_id: call.agentId,
    to: call.toNumber,
    status: call.status,
    ended_reason: call.endedReason,
    started_at: call.answeredAt === null ? null : isoTime(call.answeredAt),
    ended_at: call.endedAt === null ? null : isoTime(call.endedAt),
    duration_secs: call.answeredAt === null ? 0 : call.durationSecs,
    cost: { amount_inr: paiseToRupees(call.costPaise), per_min_inr: paiseToRupees(call.perMinPaise) },
    tier: call.tier,
    transcript_available: call.transcriptAvailable,
    recording_available: call.recordingAvailable,
    ...(call.poolId !== null ? { calls_from_source: 'pool' as const, pool_id: call.poolId } : {}),
    channel: call.channel,
    direction: call.direction,
    from: call.fromNumber,
    ...(call.phoneNumberId !== null ? { phone_number_id: call.phoneNumberId } : {}),
    ...(call.campaignId !== null ? { campaign_id: call.campaignId } : {}),
    max_duration_secs: call.maxDurationSecs,
    created_at: isoTime(call.createdAt),
    analysis: call.analysis,
    latency: call.latency,
  };
}
