import { createHmac } from 'node:crypto';
import { newId } from '../ids.ts';
import { paiseToRupees } from '../money.ts';
import type { CallRecord, CallStatus, NewEvent, Repositories } from '../store/types.ts';
import type { V1CallRecord } from '../store/v1-types.ts';

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
    const types = this.typesAt(moment, call.status);
    if (types.length === 0) return [];
    const wallet = await repos.wallet.balance(call.workspaceId);
    const data = {
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
    return types.map((type, i) => {
      const extra =
        type === 'end-of-call'
          ? {
              endedReason: call.endedReason,
              startedAt: call.answeredAt === null ? null : new Date(call.answeredAt).toISOString(),
              endedAt: call.endedAt === null ? null : new Date(call.endedAt).toISOString(),
              transcriptAvailable: call.transcriptAvailable,
              payload: v1.payload,
            }
          : type === 'call.ended'
            ? { endedReason: call.endedReason }
            : {};
      return v1Event(v1, call, type, { ...data, ...extra }, now + i);
    });
  }

  private typesAt(moment: V1Moment, status: CallStatus): V1EventType[] {
    switch (moment) {
      case 'initiated':
        return ['call.initiate'];
      case 'updated':
        return ['call.updated'];
      case 'ringing':
        return ['call.ringing'];
      case 'answered':
        return ['call.in-progress'];
      case 'settled': {
        const ending = ENDING_EVENT[status];
        return [...(ending ? [ending] : []), 'call.ended', 'end-of-call'];
      }
    }
  }
}

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
