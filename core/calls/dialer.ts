import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator, Unsubscribe } from '../coord/types.ts';
import { PollLoop } from '../poll-loop.ts';
import type { CallRecord, Store } from '../store/types.ts';
import type { Carrier, RingOutcome, RingOutcomeSink } from './carrier.ts';
import { CALLS_QUEUED_CHANNEL, type CallCommand, onCallCommand } from './control.ts';
import type { CallLifecycle } from './lifecycle.ts';
import type { LiveCallSlots } from './live-slots.ts';
import { type EndTrigger, isTerminal } from './state-machine.ts';

/** How often the dialer looks at the queue without being told (admissions and releases wake it earlier). */
const POLL_MS = 1_000;
/**
 * One dialer per workspace at a time, so calls leave the queue in order across worker nodes. The holder extends
 * the lock before each call it dials; a dialer whose lock ran out (a carrier slow to answer) stops there.
 */
const WORKSPACE_LOCK_TTL_MS = 15_000;

/** How many queued calls past the ceiling a pass looks at, for those `mayDial` holds back. */
const HELD_LOOKAHEAD = 100;

export interface DialerOptions {
  store: Store;
  coord: Coordinator;
  lifecycle: CallLifecycle;
  slots: LiveCallSlots;
  /** The carrier that dials this call (by its workspace's mode); undefined when none is configured. */
  carrierFor(call: CallRecord): Promise<Carrier | undefined>;
  /** Why `carrierFor` found no carrier for this call (the missing settings), kept as the failed call's error. */
  whyNoCarrier?(call: CallRecord): string;
  /** Every carrier this node may have dialled through, by name, to pass hang-ups on. */
  carriers: readonly Carrier[];
  /**
   * Runs before a taken call is dialled (its pre_call tools); a `skipReason` ends it `failed` with
   * `skipped-by-pre-call`, free, instead of dialling.
   */
  beforeDial?(call: CallRecord): Promise<{ skipReason?: string }>;
  /**
   * How many more calls the media gateways can take (`fleetRoom`); undefined: no bound known. Calls beyond it
   * stay `queued` (nothing dialled, nothing held from the wallet beyond their admission) until room frees.
   */
  fleetRoom?(): Promise<number | undefined>;
  /**
   * Whether a queued call may be dialled now (a legacy v1 assistant's calling hours and concurrency); false
   * leaves it queued for a later pass and the calls behind it go on.
   */
  mayDial?(call: CallRecord): Promise<boolean>;
  pollMs?: number;
  reportError?: (error: unknown) => void;
  clock?: Clock;
}

/** The gateway room a pass has left to give out. */
interface Room {
  left: number;
}

const RING_TRIGGERS: Record<RingOutcome, EndTrigger> = {
  busy: 'busy',
  ring_timeout: 'ring_timeout',
  carrier_failed: 'pipeline_error',
};

/** Where carriers report calls that ended before media: settled through the lifecycle. */
export function settleRingOutcomes(lifecycle: CallLifecycle): RingOutcomeSink {
  return async ({ workspaceId, callId }, outcome, detail) => {
    await lifecycle.settle(workspaceId, callId, RING_TRIGGERS[outcome], {
      ...(detail !== undefined ? { error: detail } : {}),
    });
  };
}

/**
 * The worker's dialer (queued -> dialing). Each pass takes every workspace with queued calls, and under that
 * workspace's lock dials its oldest queued calls while a live-call slot is free: FIFO per workspace, at most
 * the slot ceiling live, the rest waiting in `queued` (never refused). It wakes on admissions and on released
 * slots, and polls besides. A carrier that refuses a call ends it `failed`; ring outcomes come back through
 * `settleRingOutcomes`. Hang-up commands for ringing calls reach the carrier here.
 *
 * Beyond the workspaces' ceilings, the fleet's room (`fleetRoom`) bounds each pass: once the gateways have no
 * room for another call, every queue waits where it is until a call ends (its released slot wakes the dialer).
 */
export class Dialer {
  private readonly reportError: (error: unknown) => void;
  private readonly loop: PollLoop;
  private started = false;
  private unsubscribers: Unsubscribe[] = [];
  /** The coordinator state (by when it began) whose slots this dialer rebuilt from the store. */
  private rebuiltState: number | undefined;
  private readonly clock: Clock;

  constructor(private readonly options: DialerOptions) {
    this.clock = options.clock ?? systemClock;
    this.reportError = options.reportError ?? (() => {});
    this.loop = new PollLoop(() => this.pass(), options.pollMs ?? POLL_MS, this.reportError);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.unsubscribers = [
      await this.options.coord.subscribe(CALLS_QUEUED_CHANNEL, () => this.wake()),
      await onCallCommand(this.options.coord, (command) => {
        if (command.type === 'hangup') void this.hangUp(command);
      }),
    ];
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.loop.stop();
    await Promise.allSettled(this.unsubscribers.map((unsubscribe) => unsubscribe()));
    this.unsubscribers = [];
  }

  /** Look at the queue now. */
  wake(): void {
    this.loop.wake();
  }

  /**
   * One pass over every workspace with queued calls; returns how many calls it dialled. A workspace that fails
   * is reported and skipped, so it cannot hold up the queues of the workspaces after it.
   */
  async pass(): Promise<number> {
    let dialled = 0;
    await this.rebuildLostSlots();
    const workspaces = await this.options.store.calls.workspacesWithQueued();
    if (workspaces.length === 0) return 0;
    const room: Room = { left: (await this.options.fleetRoom?.()) ?? Number.POSITIVE_INFINITY };
    for (const workspaceId of workspaces) {
      if (this.loop.stopping || room.left <= 0) break;
      try {
        dialled += await this.dialWorkspace(workspaceId, room);
      } catch (error) {
        this.reportError(error);
      }
    }
    return dialled;
  }

  /**
   * After the coordinator lost its state (a Redis restart without persistence, a flush, a failover), its slots
   * undercount the live calls until their nodes re-assert them, and dialing into that gap would overfill the
   * workspaces' ceilings. So once per new state, while it is younger than a lease, the store's live calls get
   * their slots back first. A call whose node is really gone holds its slot for one lease more, then recovery
   * ends it as ever.
   */
  private async rebuildLostSlots(): Promise<void> {
    const { coord, slots, store } = this.options;
    const since = await coord.stateSince();
    if (since === this.rebuiltState || (await slots.reassertedBy(this.clock.now()))) return;
    for (const call of await store.calls.liveOlderThan(0)) {
      await slots.hold(call.workspaceId, call.id);
      // It may have ended (and freed its slot) between the read and the hold.
      const current = await store.calls.get(call.workspaceId, call.id);
      if (!current || isTerminal(current.status)) await slots.release(call.workspaceId, call.id);
    }
    this.rebuiltState = since;
  }

  private async dialWorkspace(workspaceId: string, room: Room): Promise<number> {
    const { coord, store, slots } = this.options;
    const lock = await coord.lock(`dialer:${workspaceId}`, WORKSPACE_LOCK_TTL_MS);
    if (!lock) return 0;
    let dialled = 0;
    try {
      // Calls held back by `mayDial` stay queued: look past them, a bounded way.
      const mayDial = this.options.mayDial;
      const candidates = slots.ceiling + (mayDial ? HELD_LOOKAHEAD : 0);
      for (const call of await store.calls.nextQueued(workspaceId, candidates)) {
        // No gateway has room for it: it waits, and so do the younger ones.
        if (room.left <= 0) break;
        if (mayDial && !(await mayDial(call))) continue;
        // Lost the lock: another dialer may own this queue now and have dialled this call already.
        if (!(await lock.extend(WORKSPACE_LOCK_TTL_MS))) break;
        // FIFO: when the oldest cannot go, none of the younger ones may.
        if (!(await slots.acquire(workspaceId, call.id))) break;
        room.left--;
        if (await this.dial(call)) dialled++;
      }
    } finally {
      await lock.release().catch(() => {});
    }
    return dialled;
  }

  /** Dials a call whose slot is held; false when it did not reach the carrier. */
  private async dial(call: CallRecord): Promise<boolean> {
    const { lifecycle, slots, store } = this.options;
    let carrier: Carrier | undefined;
    try {
      carrier = await this.options.carrierFor(call);
    } catch (error) {
      // Still queued: the call is tried again on a later pass, and its slot must not sit idle meanwhile.
      await slots.release(call.workspaceId, call.id).catch(() => {});
      throw error;
    }
    if (!carrier) {
      await this.endUndialled(
        call,
        this.options.whyNoCarrier?.(call) ?? 'no carrier is configured for this workspace',
      );
      return false;
    }
    const dialing = await lifecycle.markDialing(call.workspaceId, call.id, { carrier: carrier.name });
    if (!dialing) {
      // Aborted while it waited, or (after a lost workspace lock) dialled by another dialer: the slot is that
      // call's own, so it is freed only when the call is no longer live.
      const current = await store.calls.get(call.workspaceId, call.id);
      if (!current || isTerminal(current.status)) await slots.release(call.workspaceId, call.id);
      return false;
    }
    const prepared = await this.options
      .beforeDial?.(dialing)
      .catch((error: unknown): { skipReason?: string } => {
        this.reportError(error);
        return {};
      });
    if (prepared?.skipReason !== undefined) {
      await lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
        endedReason: 'skipped-by-pre-call',
        error: `a pre_call tool skipped the call: ${prepared.skipReason}`,
      });
      await slots.release(call.workspaceId, call.id);
      return false;
    }
    let carrierCallId: string;
    try {
      ({ carrierCallId } = await carrier.originate(dialing));
    } catch (error) {
      await this.endUndialled(
        call,
        `the carrier refused the call: ${error instanceof Error ? error.message : String(error)}`,
      );
      return false;
    }
    const recorded = await store.calls.setCarrierCall(call.workspaceId, call.id, {
      carrier: carrier.name,
      carrierCallId,
    });
    // The call ended (an abort) before its carrier id was recorded, so whoever ended it had no id to hang up.
    if (!recorded) {
      await carrier.hangup(carrierCallId).catch(this.reportError);
      await slots.release(call.workspaceId, call.id);
    }
    return true;
  }

  /** Ends a call that never reached a carrier `failed` (free) and frees its slot. */
  private async endUndialled(call: CallRecord, error: string): Promise<void> {
    await this.options.lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', { error });
    // The lifecycle frees the slot when it has the slots; a call that ended otherwise meanwhile still holds it.
    await this.options.slots.release(call.workspaceId, call.id);
  }

  /**
   * Hang-up commands follow an abort (the call has ended). Stopping the ringing is this node's job when it
   * has the carrier; so is freeing the call's slot, which the aborting API node does not hold.
   */
  private async hangUp(command: Extract<CallCommand, { type: 'hangup' }>): Promise<void> {
    if (!command.carrier || !command.carrierCallId) return;
    const carrier = this.options.carriers.find((c) => c.name === command.carrier);
    if (!carrier) return;
    await carrier.hangup(command.carrierCallId).catch(this.reportError);
    try {
      const call = await this.options.store.calls.get(command.workspaceId, command.callId);
      if (call && isTerminal(call.status)) await this.options.slots.release(call.workspaceId, call.id);
    } catch (error) {
      this.reportError(error);
    }
  }
}
