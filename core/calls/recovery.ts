import { MAX_TOKEN_TTL_MS } from '../auth/stream-tokens.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator } from '../coord/types.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { sendCallCommand } from './control.ts';
import type { CallLifecycle, Settlement } from './lifecycle.ts';
import type { LiveCallSlots } from './live-slots.ts';
import { isTerminal } from './state-machine.ts';

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

/**
 * When the browser's chance to join a web call runs out: its join token expires then (the API mints it so), and
 * a web call still waiting in `dialing` ends `no_answer`. Web calls do not ring, so the ring deadline does not
 * apply to them.
 */
export function webJoinDeadline(call: Pick<CallRecord, 'createdAt'>, joinWindowMs: number): number {
  return call.createdAt + joinWindowMs;
}

export interface CallRecoveryOptions {
  store: Store;
  coord: Coordinator;
  lifecycle: CallLifecycle;
  slots: LiveCallSlots;
  ringDeadlineMs?: number;
  /** How long a browser has to join a web call, from its creation (config `webCallJoinMs`). */
  webJoinWindowMs?: number;
  clock?: Clock;
}

/**
 * Crash safety for live calls (worker role). The node that runs a call renews its live-call slot; a node that
 * dies stops renewing, the lease runs out, and the next sweep ends the call `failed` (pipeline error, free),
 * its hold released and its event written, exactly once even when several workers sweep or the node comes
 * back late (settlement is one conditional update). Calls that ring past the deadline end `no_answer`; a web call
 * waits for its browser until its join token expires instead, its slot renewed here meanwhile (no node runs
 * anything for it yet), then ends `no_answer`.
 * Every call it ends is hung up as an abort would be: the carrier may still be ringing the callee, and a node
 * that only lost its lease may still be running the media.
 */
export class CallRecovery {
  private readonly ringDeadlineMs: number;
  private readonly webJoinWindowMs: number;
  private readonly clock: Clock;

  constructor(private readonly options: CallRecoveryOptions) {
    this.ringDeadlineMs = options.ringDeadlineMs ?? RING_DEADLINE_MS;
    this.webJoinWindowMs = options.webJoinWindowMs ?? MAX_TOKEN_TTL_MS;
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
    const live = await store.calls.liveOlderThan(0);
    // Right after the coordinator lost its state (a Redis restart without persistence), slots are missing
    // because nobody has re-asserted them yet, not because their nodes stopped.
    const slotsTell = live.length > 0 && (await slots.reassertedBy(this.clock.now()));
    const holders = new Map<string, Set<string>>();
    const ended: CallRecord[] = [];
    for (const call of live) {
      let held = holders.get(call.workspaceId);
      if (!held) {
        held = await slots.holders(call.workspaceId);
        holders.set(call.workspaceId, held);
      }
      const judgedBySlot = slotsTell && this.clock.now() - (call.dialingAt ?? call.createdAt) > SLOT_GRACE_MS;
      const result =
        judgedBySlot && !held.has(call.id)
          ? await lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
              error: 'the node running the call stopped (its live-call lease ran out)',
            })
          : call.status === 'dialing'
            ? await this.judgeDialing(call)
            : undefined;
      if (result?.settled) {
        ended.push(result.call);
        await this.hangUp(result.call);
      }
    }
    return ended;
  }

  /** A call still waiting to be answered: ended past its deadline; a web call's slot is kept until then. */
  private async judgeDialing(call: CallRecord): Promise<Settlement | undefined> {
    const { lifecycle, slots } = this.options;
    const now = this.clock.now();
    if (call.channel === 'web') {
      if (now <= webJoinDeadline(call, this.webJoinWindowMs)) {
        if (!(await slots.keep(call.workspaceId, call.id))) {
          // Re-asserted: unless the call ended (and freed its slot) since it was read.
          const current = await this.options.store.calls.get(call.workspaceId, call.id);
          if (!current || isTerminal(current.status)) await slots.release(call.workspaceId, call.id);
        }
        return undefined;
      }
      return lifecycle.settle(call.workspaceId, call.id, 'ring_timeout', {
        error: 'no browser joined the web call before its join token expired',
      });
    }
    if (now - (call.dialingAt ?? call.createdAt) <= this.ringDeadlineMs) return undefined;
    return lifecycle.settle(call.workspaceId, call.id, 'ring_timeout', {
      error: 'no media and no word from the carrier within the ring deadline',
    });
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
