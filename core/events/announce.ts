import type { Coordinator } from '../coord/types.ts';

/**
 * Wake-ups for the webhook dispatcher. Whoever commits a deliverable event may announce it on this channel, so
 * the dispatcher sends at once instead of at its next poll; the announcement carries nothing, the outbox is the
 * truth, and a lost announcement only delays delivery until that poll.
 */
export const EVENTS_WRITTEN_CHANNEL = 'events:written';

/** Called after a transaction that wrote deliverable events has committed. */
export type AnnounceEvents = () => void;

/** Publishes on the coordinator; failures are ignored (the dispatcher polls anyway). */
export function announceThrough(coord: Coordinator): AnnounceEvents {
  return () => {
    coord.publish(EVENTS_WRITTEN_CHANNEL, '').catch(() => {});
  };
}
