import type { CallObject } from '../calls/representation.ts';
import type { CallEventType } from '../calls/state-machine.ts';
import { isoTime } from '../clock.ts';
import { newId } from '../ids.ts';
import type { NewEvent } from '../store/call-types.ts';

/**
 * The webhook event envelope (interface "Webhook event envelope (v2)"): `{id, type, created_at, data: {call}}`.
 * It is serialised once, when the event is written to the outbox; that text is the body of every attempt and
 * every replay, so receivers see the same bytes (and the same `id`) each time.
 */
export interface EventEnvelope {
  id: string;
  type: CallEventType;
  created_at: string;
  data: { call: CallObject };
}

/** A new outbox row for `type` about `call` as it is now; `webhookUrl` null when nothing is to be delivered. */
export function callEvent(input: {
  workspaceId: string;
  type: CallEventType;
  call: CallObject;
  webhookUrl: string | null;
  now: number;
}): NewEvent {
  const id = newId('event', input.now);
  const envelope: EventEnvelope = {
    id,
    type: input.type,
    created_at: isoTime(input.now),
    data: { call: input.call },
  };
  return {
    id,
    workspaceId: input.workspaceId,
    callId: input.call.id,
    type: input.type,
    createdAt: input.now,
    body: JSON.stringify(envelope),
    webhookUrl: input.webhookUrl,
  };
}
