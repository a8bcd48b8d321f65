import { storedSettings } from '../agents/stored.ts';
import type { Tier } from '../billing/prices.ts';
import { admitWithin, DEFAULT_TIER, QUEUE_DEPTH_LIMIT } from '../calls/admission.ts';
import type { CompanionEvents } from '../calls/lifecycle.ts';
import {
  type CallRecord,
  InsufficientBalanceError,
  type NewEvent,
  type Repositories,
} from '../store/types.ts';
import { storedDocument } from './assistant.ts';
import type { V1CallEvents } from './webhooks.ts';

/** Outcomes that `retryProtocol.maxAttemptsNoPickup` places again: nobody picked up. */
const NO_PICKUP: ReadonlySet<string> = new Set(['no_answer', 'busy']);

const MINUTE_MS = 60_000;

/**
 * `callSettings.retryProtocol` of the assistant a v1 call was placed with: when the call ends not answered or
 * busy and it was attempt n of at most `maxAttemptsNoPickup`, the same call (number, payload, metadata,
 * callbackUrl, priority) is placed again as a new v1 call, attempt n + 1, not dialled before
 * `reAttemptPeriod` minutes have passed (and then inside the assistant's slots, under its concurrency). Written
 * in the settlement's transaction with its `call.initiate` webhook. No retry when the assistant is archived or
 * gone, the wallet cannot hold the new call, or the queue is full.
 */
export async function retryAfterNoPickup(
  repos: Repositories,
  ended: CallRecord,
  now: number,
): Promise<CallRecord | undefined> {
  // Only phone calls are placed again: a browser that did not join is not a number that did not pick up.
  if (!NO_PICKUP.has(ended.status) || ended.channel !== 'phone') return undefined;
  const v1 = await repos.v1.call(ended.workspaceId, ended.id);
  if (!v1) return undefined;
  const record = await repos.v1.assistant(ended.workspaceId, ended.agentId);
  const agent = await repos.agents.get(ended.workspaceId, ended.agentId);
  if (!record || !agent || storedSettings(agent.content).archived) return undefined;
  const { maxAttemptsNoPickup, reAttemptPeriod } = storedDocument(record.document).callSettings.retryProtocol;
  if (v1.attempt >= maxAttemptsNoPickup) return undefined;
  if ((await repos.calls.countOpen(ended.workspaceId)) >= QUEUE_DEPTH_LIMIT) return undefined;
  let call: CallRecord;
  try {
    ({ call } = await admitWithin(
      repos,
      {
        workspaceId: ended.workspaceId,
        agentId: ended.agentId,
        channel: ended.channel,
        to: ended.toNumber,
        variables: ended.variables,
        webhookUrl: null,
      },
      DEFAULT_TIER as Tier,
    ));
  } catch (error) {
    // The wallet refuses before writing anything: the settlement goes on without a retry.
    if (error instanceof InsufficientBalanceError) return undefined;
    throw error;
  }
  await repos.v1.insertCall({
    callId: call.id,
    workspaceId: ended.workspaceId,
    publicKey: v1.publicKey,
    callbackUrl: v1.callbackUrl,
    metadata: v1.metadata,
    payload: v1.payload,
    priority: v1.priority,
    attempt: v1.attempt + 1,
    retryOf: ended.id,
    notBefore: now + reAttemptPeriod * MINUTE_MS,
  });
  return call;
}

/**
 * The v1 webhooks of a moment (`events`), and at settlement the retry `retryAfterNoPickup` places, with the
 * new call's own `call.initiate`.
 */
export function withRetries(events: Pick<V1CallEvents, 'eventsFor'>): CompanionEvents {
  return {
    eventsFor: async (repos, call, moment, now) => {
      const rows: NewEvent[] = await events.eventsFor(repos, call, moment, now);
      if (moment !== 'settled') return rows;
      const retry = await retryAfterNoPickup(repos, call, now);
      if (retry) rows.push(...(await events.eventsFor(repos, retry, 'initiated', now)));
      return rows;
    },
  };
}
