import type { Coordinator } from '../coord/types.ts';
import { CALLS_QUEUED_CHANNEL } from './control.ts';

/** Live calls (`dialing` + `in_progress`) per workspace (interface "Limits"); more wait in `queued`. */
export const LIVE_CALLS_PER_WORKSPACE = 5;
/**
 * A slot's lease: long enough to ring (about 60 s) with room, renewed by the gateway while media flows. A node
 * that dies stops renewing, so its calls' slots free themselves within this time and recovery ends the calls.
 */
export const LIVE_SLOT_LEASE_MS = 90_000;

/** Room for the clocks of the nodes that write and read the coordinator's times. */
const CLOCK_MARGIN_MS = 10_000;

/**
 * The coordinator slots that cap a workspace's live calls. The holder of a slot is the call id, so whichever
 * node ends a call (the gateway that ran it, the API that aborted it, recovery) can release it.
 */
export class LiveCallSlots {
  constructor(
    private readonly coord: Coordinator,
    readonly ceiling: number = LIVE_CALLS_PER_WORKSPACE,
    readonly leaseMs: number = LIVE_SLOT_LEASE_MS,
  ) {}

  /** How often a holder renews its lease: a third of it, so two renewals can fail before it runs out. */
  get renewEveryMs(): number {
    return Math.max(50, Math.floor(this.leaseMs / 3));
  }

  acquire(workspaceId: string, callId: string): Promise<boolean> {
    return this.coord.slots.acquire(scopeOf(workspaceId), this.ceiling, callId, this.leaseMs);
  }

  renew(workspaceId: string, callId: string): Promise<boolean> {
    return this.coord.slots.renew(scopeOf(workspaceId), callId, this.leaseMs);
  }

  /**
   * Renews the slot of a call that is live by fact (its media runs here, or the store says it is live), and
   * re-asserts it, whatever the ceiling, when the coordinator lost it (a Redis restart without persistence, a
   * flush, a failover). Returns false when it had to re-assert.
   */
  async keep(workspaceId: string, callId: string): Promise<boolean> {
    if (await this.renew(workspaceId, callId)) return true;
    await this.coord.slots.hold(scopeOf(workspaceId), callId, this.leaseMs);
    return false;
  }

  /** Re-asserts the slot of a call the store says is live, whatever the ceiling. */
  hold(workspaceId: string, callId: string): Promise<void> {
    return this.coord.slots.hold(scopeOf(workspaceId), callId, this.leaseMs);
  }

  /**
   * Whether every live holder has had its chance to re-assert its slot since the coordinator's state began:
   * a lease (in which each renews at least twice) plus a margin for clocks. Until then a missing slot is no
   * evidence that the node running the call stopped, and the held slots may undercount the live calls.
   */
  async reassertedBy(now: number): Promise<boolean> {
    return now - (await this.coord.stateSince()) > this.leaseMs + CLOCK_MARGIN_MS;
  }

  /** Frees the call's slot and tells dialers that a queued call may go. */
  async release(workspaceId: string, callId: string): Promise<void> {
    await this.coord.slots.release(scopeOf(workspaceId), callId);
    await this.coord.publish(CALLS_QUEUED_CHANNEL, '').catch(() => {});
  }

  async holders(workspaceId: string): Promise<Set<string>> {
    return new Set(await this.coord.slots.holders(scopeOf(workspaceId)));
  }
}

function scopeOf(workspaceId: string): string {
  return `live-calls:${workspaceId}`;
}
