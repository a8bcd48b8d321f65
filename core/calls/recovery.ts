import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator } from '../coord/types.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { sendCallCommand } from './control.ts';
import type { CallLifecycle } from './lifecycle.ts';
import type { LiveCallSlots } from './live-slots.ts';

/**
 * Ringing longer than this without media or a word from the carrier ends the call `no_answer` (the interface:
 * about 60 seconds of ringing); carriers report their own ring timeouts well before it.
 */
export const RING_DEADLINE_MS = 75_000;
/**
 * A call is only judged by its slot once the slot has had time to appear (the dialer takes the slot before it
 * marks the call dialing, so this is a margin for clocks and in-flight transactions, not for the dial itself).
 */
const SLOT_GRACE_MS = 10_000;
const SWEEP_LOCK_KEY = 'calls:recovery';

export interface CallRecoveryOptions {
  store: Store;
  coord: Coordinator;
  lifecycle: CallLifecycle;
  slots: LiveCallSlots;
  ringDeadlineMs?: number;
  clock?: Clock;
}

/**
 * Crash safety for live calls (worker role). The node that runs a call renews its live-call slot; a node that
 * dies stops renewing, the lease runs out, and the next sweep ends the call `failed` (pipeline error, free),
 * its hold released and its event written, exactly once even when several workers sweep or the node comes
 * back late (settlement is one conditional update). Calls that ring past the deadline end `no_answer`.
 * Every call it ends is hung up as an abort would be: the carrier may still be ringing the callee, and a node
 * that only lost its lease may still be running the media.
 */
export class CallRecovery {
  private readonly ringDeadlineMs: number;
  private readonly clock: Clock;

  constructor(private readonly options: CallRecoveryOptions) {
    this.ringDeadlineMs = options.ringDeadlineMs ?? RING_DEADLINE_MS;
    this.clock = options.clock ?? systemClock;
  }

  /** One sweep; returns the calls it ended. Only one worker sweeps at a time. */
  async sweep(): Promise<CallRecord[]> {
    const lock = await this.options.coord.lock(SWEEP_LOCK_KEY, 30_000);
    if (!lock) return [];
    try {
      return await this.sweepLocked();
    } finally {
      await lock.release().catch(() => {});
    }
  }

  private async sweepLocked(): Promise<CallRecord[]> {
    const { store, lifecycle, slots } = this.options;
    const live = await store.calls.liveOlderThan(SLOT_GRACE_MS);
    const holders = new Map<string, Set<string>>();
    const ended: CallRecord[] = [];
    for (const call of live) {
      let held = holders.get(call.workspaceId);
      if (!held) {
        held = await slots.holders(call.workspaceId);
        holders.set(call.workspaceId, held);
      }
      const result = !held.has(call.id)
        ? await lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
            error: 'the node running the call stopped (its live-call lease ran out)',
          })
        : call.status === 'dialing' &&
            this.clock.now() - (call.dialingAt ?? call.createdAt) > this.ringDeadlineMs
          ? await lifecycle.settle(call.workspaceId, call.id, 'ring_timeout', {
              error: 'no media and no word from the carrier within the ring deadline',
            })
          : undefined;
      if (result?.settled) {
        ended.push(result.call);
        await this.hangUp(result.call);
      }
    }
    return ended;
  }

  private async hangUp(call: CallRecord): Promise<void> {
    await sendCallCommand(this.options.coord, {
      type: 'hangup',
      workspaceId: call.workspaceId,
      callId: call.id,
      carrier: call.carrier,
      carrierCallId: call.carrierCallId,
    }).catch(() => {});
  }
}
