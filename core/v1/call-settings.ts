import { WEEKDAYS } from '../campaigns/settings.ts';
import { isInsideSlots } from '../campaigns/window.ts';
import type { Clock } from '../clock.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { type AssistantDocument, storedDocument } from './assistant.ts';

/** An assistant's `callSettings.slots` as campaign calling hours: every day of the week, in its `timezone`. */
export function callingHours(doc: AssistantDocument) {
  return doc.callSettings.slots.map((slot) => ({
    days: [...WEEKDAYS],
    start: slot.startTime,
    end: slot.endTime,
  }));
}

/**
 * Whether a queued call placed through v1 may be dialled now: inside its assistant's `callSettings.slots` (read
 * on the clock of the assistant's `timezone` by the campaign dialler's calling-hours rule; no slots: any time),
 * while fewer than `concurrentCallCount` of the assistant's v1 calls are live, and, for a retry, once its
 * `reAttemptPeriod` has passed. A call held back stays queued
 * (`initiate`) and is looked at again on the dialer's next pass. Calls placed in v2 are not held.
 */
export function v1DialRule(store: Store, clock: Clock): (call: CallRecord) => Promise<boolean> {
  return async (call) => {
    const v1 = await store.v1.call(call.workspaceId, call.id);
    if (!v1) return true;
    // A retry of `retryProtocol` waits its `reAttemptPeriod`.
    if (v1.notBefore !== null && v1.notBefore > clock.now()) return false;
    const record = await store.v1.assistant(call.workspaceId, call.agentId);
    if (!record) return true;
    const doc = storedDocument(record.document);
    const hours = callingHours(doc);
    if (hours.length > 0 && !isInsideSlots(clock.now(), doc.timezone, hours)) return false;
    const live = await store.v1.countLiveCalls(call.workspaceId, call.agentId);
    return live < doc.callSettings.concurrentCallCount;
  };
}
