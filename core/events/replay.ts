import { createHmac } from 'node:crypto';
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

/**
 * Where post_call tool deliveries go: their URL and headers are rendered from the tool's templates at each
 * attempt (secrets are opened only then), and each attempt is recorded on the call as a tool run.
 */
export interface ToolTargets {
  resolve(event: EventRecord): Promise<{ url: string; headers: Record<string, string> }>;
  recordAttempt(
    event: EventRecord,
    result: DeliveryResult,
    startedAt: number,
    durationMs: number,
  ): Promise<void>;
}

/** The private keys legacy v1 webhooks are signed with, by organization public key. */
export interface V1SigningKeys {
  privateKeyOf(publicKey: string): Promise<string | undefined>;
}

/** Sends a stored event's body as it is, signed now with every currently valid secret of its workspace. */
export async function sendStoredEvent(
  store: Store,
  sender: WebhookSender,
  event: EventRecord,
  nowMs: number,
  tools?: ToolTargets,
  v1Keys?: V1SigningKeys,
): Promise<DeliveryResult> {
  if (event.toolTarget) return sendToolDelivery(store, sender, event, nowMs, tools);
  if (event.webhookUrl === null) return { ok: false, status: null, error: 'no webhook_url', permanent: true };
  if (event.v1PublicKey) return sendV1Event(sender, event, event.webhookUrl, event.v1PublicKey, v1Keys);
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

/** A legacy v1 webhook: the same bytes, signed with the organization private key (bare hex, no timestamp). */
async function sendV1Event(
  sender: WebhookSender,
  event: EventRecord,
  url: string,
  publicKey: string,
  keys: V1SigningKeys | undefined,
): Promise<DeliveryResult> {
  const privateKey = await keys?.privateKeyOf(publicKey);
  if (!privateKey) {
    return { ok: false, status: null, error: 'no v1 private key to sign with', permanent: false };
  }
  return sender.send({
    url,
    eventId: event.id,
    body: event.body,
    secrets: [],
    timestampSecs: 0,
    v1Signature: {
      signature: createHmac('sha256', privateKey).update(event.body, 'utf8').digest('hex'),
      publicKey,
    },
  });
}

async function sendToolDelivery(
  store: Store,
  sender: WebhookSender,
  event: EventRecord,
  nowMs: number,
  tools: ToolTargets | undefined,
): Promise<DeliveryResult> {
  if (!tools)
    return { ok: false, status: null, error: 'this process cannot deliver tool calls', permanent: false };
  const started = performance.now();
  let result: DeliveryResult;
  try {
    const target = await tools.resolve(event);
    const secrets = (await store.secrets.webhookSecrets(event.workspaceId)).map((s) => s.secret);
    result = await sender.send({
      url: target.url,
      headers: target.headers,
      eventId: event.id,
      body: event.body,
      secrets,
      timestampSecs: Math.floor(nowMs / 1_000),
    });
  } catch (error) {
    result = {
      ok: false,
      status: null,
      error: error instanceof Error ? error.message : String(error),
      permanent: false,
    };
  }
  await tools.recordAttempt(event, result, nowMs, Math.round(performance.now() - started)).catch(() => {});
  return result;
}

/**
 * Sends a stored event again now, once, whatever its status (the operator's dead-letter replay): the same body
 * bytes, so the same `id`, with a fresh signature. A success marks it delivered; a failure is only noted (the
 * event keeps its status and schedule). Unknown id: `not_found`. Needs no dispatcher lock: any process may replay.
 */
export async function replayEvent(
  deps: { store: Store; sender: WebhookSender; clock?: Clock; tools?: ToolTargets; v1Keys?: V1SigningKeys },
  eventId: string,
): Promise<ReplayReport> {
  const { store, sender } = deps;
  const clock = deps.clock ?? systemClock;
  const event = await store.events.get(eventId);
  if (!event) throw notFound('event');
  if (event.webhookUrl === null) {
    return { eventId, delivered: false, status: null, error: 'the event has no webhook_url to deliver to' };
  }
  const result = await sendStoredEvent(store, sender, event, clock.now(), deps.tools, deps.v1Keys);
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
