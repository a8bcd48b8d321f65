import type { CallRecord } from '../store/types.ts';
import type { ContactStatus } from './settings.ts';

/** What became of a contact once its call ended: its next status, and when it is tried again (if it is). */
export interface ContactOutcome {
  status: Exclude<ContactStatus, 'calling'>;
  nextAttemptAt: number | null;
}

/**
 * The rules after a campaign call ends:
 * - connected (`completed`, or `timeout` at the call's maximum duration): the contact is `completed`;
 * - a pre-call tool skipped it, or its owner aborted the call: `failed`, never called again;
 * - not connected (`no_answer`, `busy`, `failed`, and `voicemail`: a machine answered, the person did not):
 *   `pending` again `reAttemptPeriodMs` after the call ended, until `retryCount` retries are used, then
 *   `exhausted`. A retry that falls outside the calling hours waits for them to open.
 */
export function contactOutcome(
  call: Pick<CallRecord, 'status' | 'endedReason' | 'endedAt'>,
  attempts: number,
  rules: { retryCount: number; reAttemptPeriodMs: number },
  now: number,
): ContactOutcome {
  switch (call.status) {
    case 'completed':
    case 'timeout':
      return { status: 'completed', nextAttemptAt: null };
    case 'aborted':
      return { status: 'failed', nextAttemptAt: null };
    default:
      if (call.endedReason === 'skipped-by-pre-call') return { status: 'failed', nextAttemptAt: null };
      if (attempts > rules.retryCount) return { status: 'exhausted', nextAttemptAt: null };
      return { status: 'pending', nextAttemptAt: (call.endedAt ?? now) + rules.reAttemptPeriodMs };
  }
}
