import type { LiveCallEvent } from '../../core/calls/live-events.ts';
import type { CallRecord } from '../../core/store/types.ts';
import type { StreamEvent } from '../media-handler.ts';

/**
 * What the browser on a web call is told about it (PROTOCOL.md "Call events"): the live events the API streams
 * to the call's owner, except that `call.status` carries only the call's state (`status`, `ended_reason`), not
 * the whole call object. The page cannot hold an API key, so this is how the conversation reaches it.
 */
export function browserEventOf(event: LiveCallEvent): StreamEvent {
  if (event.type === 'call.status') {
    return { type: 'call.status', status: event.call.status, ended_reason: event.call.ended_reason };
  }
  return event;
}

export function callStatusEvent(call: Pick<CallRecord, 'status' | 'endedReason'>): StreamEvent {
  return { type: 'call.status', status: call.status, ended_reason: call.endedReason };
}
