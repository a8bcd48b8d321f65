import { createHmac } from 'node:crypto';
import { isoTime } from '../clock.ts';
import { newId } from '../ids.ts';
import { paiseToRupees } from '../money.ts';
import type { CallRecord, CallStatus, NewEvent, Repositories } from '../store/types.ts';
import type { V1CallRecord } from '../store/v1-types.ts';
import { toolCallEntry } from '../tools/tool-calls.ts';

/**
 * Legacy v1 webhooks (interface "v1 webhooks"; README "v1 webhooks" has an example body of each): the envelope
 * `{event: {type, data}}` plus the call's `metadata` echoed back, POSTed to the call's `callbackUrl` through the
 * same outbox, retries, dead letter and replay as v2, and signed v1's way (`x-signature`: lowercase hex
 * HMAC-SHA256 of the raw body keyed with the organization private key, plus `x-public-key`).
 */
export const V1_EVENT_TYPES = [
  'call.initiate',
  'call.updated',
  'call.ringing',
  'call.in-progress',
  'call.completed',
  'call.voicemail',
  'call.no-answer',
  'call.busy',
  'call.failed',
  'call.aborted',
  'call.ended',
  'end-of-call',
  'transcript',
  'analysis',
  'action',
] as const;
export type V1EventType = (typeof V1_EVENT_TYPES)[number];

/** A call's status in v1's words (interface "Versioning", migration mapping). */
export const V1_STATUS: Record<CallStatus, string> = {
  queued: 'initiate',
  dialing: 'ringing',
  in_progress: 'in-progress',
  completed: 'completed',
  voicemail: 'voicemail',
  no_answer: 'no-answer',
  busy: 'busy',
  failed: 'failed',
  timeout: 'ended',
  aborted: 'aborted',
};

/** The event each ending sends before `call.ended` (a call that ran to its maximum duration sends none). */
const ENDING_EVENT: Partial<Record<CallStatus, V1EventType>> = {
  completed: 'call.completed',
  voicemail: 'call.voicemail',
  no_answer: 'call.no-answer',
  busy: 'call.busy',
  failed: 'call.failed',
  aborted: 'call.aborted',
};

/** A moment of a call's life that v1 integrations hear about. */
export type V1Moment = 'initiated' | 'updated' | 'ringing' | 'answered' | 'settled';

/** The bare-hex `x-signature` of a v1 webhook body. */
export function v1Signature(privateKey: string, body: string | Uint8Array): string {
  return createHmac('sha256', privateKey).update(body).digest('hex');
}

export interface V1CallEventsOptions {
  /** A link to the call's recording, when it has one (signed; see README). */
  recordingUrl?: (call: CallRecord, now: number) => string | null;
  /** The call's stored transcript, for the `transcript` event (none when not given). */
  readTranscript?: (workspaceId: string, callId: string) => Promise<unknown>;
}

/**
 * Writes the v1 webhooks of a call placed through v1, inside the transaction of the change they describe (the
 * call lifecycle asks at each moment; calls without a v1 record get none, so v2's events are untouched).
 */
export class V1CallEvents {
  constructor(private readonly options: V1CallEventsOptions = {}) {}

  async eventsFor(repos: Repositories, call: CallRecord, moment: V1Moment, now: number): Promise<NewEvent[]> {
    const v1 = await repos.v1.call(call.workspaceId, call.id);
    if (!v1?.callbackUrl) return [];
    const wallet = await repos.wallet.balance(call.workspaceId);
    const common = {
      call: {
        id: call.id,
        status: V1_STATUS[call.status],
        durationSeconds: call.durationSecs,
        recordingUrl: call.recordingAvailable ? (this.options.recordingUrl?.(call, now) ?? null) : null,
      },
      credits: { used: paiseToRupees(call.costPaise), available: paiseToRupees(wallet.availablePaise) },
      assistant: call.agentId,
      phoneNumber: call.toNumber,
    };
    const bodies =
      moment === 'settled' ? await this.endingBodies(repos, call, v1) : [[MOMENT_EVENT[moment], {}] as const];
    return bodies.map(([type, extra], i) => v1Event(v1, call, type, { ...common, ...extra }, now + i));
  }

  /**
   * What a call's ending sends, in order: how it ended, the tools the agent ran (`action`, one each), the
   * transcript and the analysis when the call has them, `call.ended`, and the report `end-of-call`.
   */
  private async endingBodies(
    repos: Repositories,
    call: CallRecord,
    v1: V1CallRecord,
  ): Promise<Array<readonly [V1EventType, Record<string, unknown>]>> {
    const out: Array<readonly [V1EventType, Record<string, unknown>]> = [];
    const ending = ENDING_EVENT[call.status];
    if (ending) out.push([ending, {}]);
    for (const run of await repos.toolRuns.forCall(call.workspaceId, call.id)) {
      if (run.phase === 'on_call') out.push(['action', { action: toolCallEntry(run) }]);
    }
    if (call.transcriptAvailable && this.options.readTranscript) {
      const transcript = await this.options.readTranscript(call.workspaceId, call.id).catch(() => undefined);
      if (transcript) out.push(['transcript', { transcript }]);
    }
    if (call.analysis) out.push(['analysis', { analysis: call.analysis }]);
    out.push(['call.ended', { endedReason: call.endedReason }]);
    out.push([
      'end-of-call',
      {
        endedReason: call.endedReason,
        startedAt: call.answeredAt === null ? null : isoTime(call.answeredAt),
        endedAt: call.endedAt === null ? null : isoTime(call.endedAt),
        transcriptAvailable: call.transcriptAvailable,
        payload: v1.payload,
      },
    ]);
    return out;
  }
}

const MOMENT_EVENT: Record<Exclude<V1Moment, 'settled'>, V1EventType> = {
  initiated: 'call.initiate',
  updated: 'call.updated',
  ringing: 'call.ringing',
  answered: 'call.in-progress',
};

/** One v1 webhook of a call, serialised once: every attempt and replay sends these bytes. */
export function v1Event(
  v1: V1CallRecord,
  call: Pick<CallRecord, 'id' | 'workspaceId'>,
  type: V1EventType,
  data: Record<string, unknown>,
  now: number,
): NewEvent {
  const envelope = {
    event: { type, data },
    ...(v1.metadata !== null && v1.metadata !== undefined ? { metadata: v1.metadata } : {}),
  };
  return {
    id: newId('event', now),
    workspaceId: call.workspaceId,
    callId: call.id,
    type,
    createdAt: now,
    body: JSON.stringify(envelope),
    webhookUrl: v1.callbackUrl,
    v1PublicKey: v1.publicKey,
  };
}
