import { type Clock, systemClock } from '../clock.ts';
import { notFound } from '../errors.ts';
import type { EventRecord, Store } from '../store/types.ts';
import type { DeliveryResult, WebhookSender } from './delivery.ts';

export interface ReplayReport {
  eventId: string;
  delivered: boolean;
  /** HTTP status of the receiver's answer; null when there was none. */
  status: number | null;
  error: string | null;
}

/** Sends a stored event's body as it is, signed now with every currently valid secret of its workspace. */
export async function sendStoredEvent(
  store: Store,
  sender: WebhookSender,
  event: EventRecord,
  nowMs: number,
): Promise<DeliveryResult> {
  if (event.webhookUrl === null) return { ok: false, status: null, error: 'no webhook_url', permanent: true };
  const secrets = (await store.secrets.webhookSecrets(event.workspaceId)).map((s) => s.secret);
  if (secrets.length === 0) {
    return { ok: false, status: null, error: 'the workspace has no webhook secret', permanent: false };
  }
  return sender.send({
    url: event.webhookUrl,
    eventId: event.id,
    body: event.body,
    secrets,
    timestampSecs: Math.floor(nowMs / 1_000),
  });
}

/**
 * Sends a stored event again now, once, whatever its status (the operator's dead-letter replay): the same body
 * bytes, so the same `id`, with a fresh signature. A success marks it delivered; a failure is only noted (the
 * event keeps its status and schedule). Unknown id: `not_found`. Needs no dispatcher lock: any process may replay.
 */
export async function replayEvent(
  deps: { store: Store; sender: WebhookSender; clock?: Clock },
  eventId: string,
): Promise<ReplayReport> {
  const { store, sender } = deps;
  const clock = deps.clock ?? systemClock;
  const event = await store.events.get(eventId);
  if (!event) throw notFound('event');
  if (event.webhookUrl === null) {
    return { eventId, delivered: false, status: null, error: 'the event has no webhook_url to deliver to' };
  }
  const result = await sendStoredEvent(store, sender, event, clock.now());
  const report: ReplayReport = result.ok
    ? { eventId, delivered: true, status: result.status, error: null }
    : { eventId, delivered: false, status: result.status, error: result.error };
  await store.events.recordReplay(eventId, {
    delivered: report.delivered,
    status: report.status,
    error: report.error,
  });
  return report;
}
