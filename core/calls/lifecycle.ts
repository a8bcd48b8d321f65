import { callCostPaise, DEFAULT_PRICES, type PriceTable, type Tier } from '../billing/prices.ts';
import { type Clock, systemClock } from '../clock.ts';
import { ApiError, notFound } from '../errors.ts';
import type { AnnounceEvents } from '../events/announce.ts';
import { callEvent } from '../events/envelope.ts';
import type { CallRecord, CallStatus, EventRecord, NewEvent, Repositories, Store } from '../store/types.ts';
import type { LiveCallSlots } from './live-slots.ts';
import { callObject } from './representation.ts';
import {
  billsMedia,
  CALL_TRANSITIONS,
  type EndTrigger,
  isTerminal,
  type TerminalStatus,
} from './state-machine.ts';

/**
 * How long a call may stay live before orphan recovery ends it without word from its gateway: the longest call
 * the interface allows (1,800 s) plus about a minute of ringing, plus five minutes of grace for a gateway that
 * is slow to settle. Anything older has lost its gateway.
 */
export const ORPHAN_AGE_MS = (1_800 + 60 + 300) * 1_000;

export interface CallLifecycleDeps {
  store: Store;
  clock?: Clock;
  /** Told after commit whenever a deliverable event was written (wakes the dispatcher). */
  announce?: AnnounceEvents;
  /** The live-call slots: a settled call's slot is released at once, so the next queued call can dial. */
  slots?: LiveCallSlots;
  /** Told after commit about every call this lifecycle ended (the call-ended log line). */
  onSettled?: (call: CallRecord) => void;
  /** Outbox rows written with every settlement besides its terminal event (post_call tool deliveries). */
  afterSettle?: {
    eventsFor(repos: Repositories, call: CallRecord, callObject: object, now: number): Promise<NewEvent[]>;
  };
  /**
   * Outbox rows of another product about the same moment (legacy v1 webhooks of calls placed through v1),
   * written in the transaction of the change; none for other calls.
   */
  companionEvents?: CompanionEvents;
}

/** The moments of a call's life the lifecycle tells companion events about. */
export type CompanionMoment = 'ringing' | 'answered' | 'settled';

export interface CompanionEvents {
  eventsFor(repos: Repositories, call: CallRecord, moment: CompanionMoment, now: number): Promise<NewEvent[]>;
}

export interface SettleDetails {
  /** Overrides the default `ended_reason` of the outcome. */
  endedReason?: string;
  /** What went wrong, for operators; never on the API. */
  error?: string;
  /** When media stopped, if earlier than now (a gateway settling after flushing its recording). */
  endedAt?: number;
  /** For voicemail straight from dialing: when the machine picked up (media went live). */
  answeredAt?: number;
}

export type Settlement =
  | { settled: true; call: CallRecord; previousStatus: CallStatus; event: EventRecord; deliveries?: number }
  | { settled: false; call: CallRecord | undefined };

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/** Bills at the rate the call was admitted with, whatever the price table says now. */
function admittedRate(call: CallRecord): PriceTable {
  return { ...DEFAULT_PRICES, perMinutePaise: () => call.perMinPaise };
}

/**
 * The transitions of a call after admission, each one transaction, each decided by one conditional UPDATE
 * (`CallRepo.transition`). Settlement ends a call, bills it and writes its one terminal event together: the
 * winner of a race (an abort against a hang-up, orphan recovery against a late gateway) captures the cost from
 * the admission hold and releases the rest; the loser writes nothing and learns the call's state.
 *
 * Billing: media seconds from answer to end, per started second at the call's rate, capped at the hold, for
 * completed, voicemail and timeout; never for aborted and failed calls (a platform error is not the
 * customer's cost), nothing for calls that never connected.
 */
export class CallLifecycle {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly announce: AnnounceEvents | undefined;
  private readonly slots: LiveCallSlots | undefined;
  private readonly onSettled: ((call: CallRecord) => void) | undefined;
  private readonly afterSettle: CallLifecycleDeps['afterSettle'];
  private readonly companion: CompanionEvents | undefined;

  constructor(deps: CallLifecycleDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? systemClock;
    this.announce = deps.announce;
    this.slots = deps.slots;
    this.onSettled = deps.onSettled;
    this.afterSettle = deps.afterSettle;
    this.companion = deps.companionEvents;
  }

  /** queued -> dialing; undefined when the call is no longer queued (aborted meanwhile) or unknown. */
  async markDialing(
    workspaceId: string,
    id: string,
    details: { gatewayNode?: string; carrier?: string; carrierCallId?: string; fromNumber?: string } = {},
  ): Promise<CallRecord | undefined> {
    const { from, to } = CALL_TRANSITIONS.dial;
    const transition = { from, to, set: { ...details, dialingAt: this.clock.now() } };
    const companion = this.companion;
    if (!companion) return this.store.calls.transition(workspaceId, id, transition);
    const result = await this.store.transaction(async (repos) => {
      const call = await repos.calls.transition(workspaceId, id, transition);
      if (!call) return undefined;
      const extra = await appendAll(
        repos,
        await companion.eventsFor(repos, call, 'ringing', this.clock.now()),
      );
      return { call, extra };
    });
    if (result?.extra) this.announce?.();
    return result?.call;
  }

  /** dialing -> in_progress with `call.started`; undefined when the call is no longer dialing or unknown. */
  async markAnswered(
    workspaceId: string,
    id: string,
    details: { gatewayNode?: string } = {},
  ): Promise<CallRecord | undefined> {
    const { from, to, event } = CALL_TRANSITIONS.answer;
    const result = await this.store.transaction(async (repos) => {
      const now = this.clock.now();
      const call = await repos.calls.transition(workspaceId, id, {
        from,
        to,
        set: { ...details, answeredAt: now },
      });
      if (!call) return undefined;
      const written = await repos.events.append(
        callEvent({ workspaceId, type: event, call: callObject(call), webhookUrl: call.webhookUrl, now }),
      );
      const extra = this.companion
        ? await appendAll(repos, await this.companion.eventsFor(repos, call, 'answered', now))
        : 0;
      return { call, written, extra };
    });
    if (result) this.announced(result.written);
    if (result?.extra) this.announce?.();
    return result?.call;
  }

  /** Ends the call by `outcome` if it still can end that way (see the class comment for billing). */
  async settle(
    workspaceId: string,
    id: string,
    outcome: EndTrigger,
    details: SettleDetails = {},
  ): Promise<Settlement> {
    const result = await this.store.transaction((repos) =>
      this.settleIn(repos, workspaceId, id, outcome, details),
    );
    if (result.settled) {
      this.announced(result.event);
      if (result.deliveries) this.announce?.();
      this.onSettled?.(result.call);
      // After commit: a failure here only delays the slot until its lease runs out.
      await this.slots?.release(workspaceId, id).catch(() => {});
    }
    return result;
  }

  /**
   * `POST /v2/calls/{id}/abort`: queued, dialing or in progress -> aborted, never billed. `hangUp` says the call
   * was live, so the caller must tell its gateway to hang up. An ended call answers `409 conflict`.
   */
  async abort(workspaceId: string, id: string): Promise<{ call: CallRecord; hangUp: boolean }> {
    const result = await this.settle(workspaceId, id, 'abort');
    if (result.settled) {
      const wasLive = result.previousStatus === 'dialing' || result.previousStatus === 'in_progress';
      return { call: result.call, hangUp: wasLive };
    }
    if (!result.call) throw notFound('call');
    throw new ApiError('conflict', `the call has already ended (${result.call.status})`);
  }

  /**
   * Ends, as `failed` with `pipeline-error` (free), the live calls of a gateway node that died, or every call
   * live longer than any call can be. Each is settled exactly once, even when the gateway reports late or two
   * workers recover at once. Returns the calls this run ended.
   */
  async recoverOrphans(
    which: { gatewayNode: string } | { olderThanMs: number } = { olderThanMs: ORPHAN_AGE_MS },
  ): Promise<CallRecord[]> {
    const candidates =
      'gatewayNode' in which
        ? await this.store.calls.liveOnNode(which.gatewayNode)
        : await this.store.calls.liveOlderThan(which.olderThanMs);
    const ended: CallRecord[] = [];
    for (const call of candidates) {
      const error =
        'gatewayNode' in which
          ? `gateway node ${which.gatewayNode} stopped while hosting the call`
          : 'the call outlived its longest possible duration without word from its gateway';
      const result = await this.settle(call.workspaceId, call.id, 'pipeline_error', { error });
      if (result.settled) ended.push(result.call);
    }
    return ended;
  }

  private async settleIn(
    repos: Repositories,
    workspaceId: string,
    id: string,
    outcome: EndTrigger,
    details: SettleDetails,
  ): Promise<Settlement> {
    const rule = CALL_TRANSITIONS[outcome];
    const to: TerminalStatus = rule.to;
    // Locked (PostgreSQL) or under the write lock (SQLite) until commit: what is computed from it stays true.
    const call = await repos.calls.getForUpdate(workspaceId, id);
    if (!call || !(rule.from as readonly CallStatus[]).includes(call.status)) return { settled: false, call };
    const now = this.clock.now();
    const endedAt = clamp(details.endedAt ?? now, call.answeredAt ?? call.createdAt, now);
    const answeredAt =
      call.answeredAt ??
      (to === 'voicemail' && details.answeredAt !== undefined
        ? clamp(details.answeredAt, call.dialingAt ?? call.createdAt, endedAt)
        : null);
    const durationSecs = answeredAt === null ? 0 : Math.ceil((endedAt - answeredAt) / 1_000);
    const hold = await repos.wallet.getHold(workspaceId, id);
    const billable = billsMedia(to) && answeredAt !== null && hold?.status === 'held';
    const costPaise = billable
      ? Math.min(callCostPaise(call.tier as Tier, durationSecs, admittedRate(call)), hold.amountPaise)
      : 0;
    const error = details.error ?? (hold ? undefined : 'settled without a wallet hold; nothing was charged');
    const ended = await repos.calls.transition(workspaceId, id, {
      from: rule.from,
      to,
      set: {
        endedAt,
        endedReason: details.endedReason ?? rule.endedReason,
        durationSecs,
        costPaise,
        ...(answeredAt !== null && call.answeredAt === null ? { answeredAt } : {}),
        ...(error !== undefined ? { error } : {}),
      },
    });
    // Cannot lose after the locked read; if it ever does, nothing has been written yet.
    if (!ended || !isTerminal(ended.status))
      return { settled: false, call: await repos.calls.get(workspaceId, id) };
    if (costPaise > 0) {
      await repos.wallet.capture(workspaceId, {
        reference: id,
        amountPaise: costPaise,
        description: `Call ${id}: ${durationSecs} s at ${call.tier}`,
      });
    } else if (hold) {
      await repos.wallet.release(workspaceId, id);
    }
    const event = await repos.events.append(
      callEvent({
        workspaceId,
        type: rule.event,
        call: callObject(ended),
        webhookUrl: ended.webhookUrl,
        now,
      }),
    );
    const extra = (await this.afterSettle?.eventsFor(repos, ended, callObject(ended), now)) ?? [];
    for (const row of extra) await repos.events.append(row);
    const companions = this.companion
      ? await appendAll(repos, await this.companion.eventsFor(repos, ended, 'settled', now))
      : 0;
    return {
      settled: true,
      call: ended,
      previousStatus: call.status,
      event,
      deliveries: extra.length + companions,
    };
  }

  private announced(event: EventRecord): void {
    if (event.webhookUrl !== null) this.announce?.();
  }
}

/** Appends the rows; returns how many are to be delivered. */
async function appendAll(repos: Repositories, rows: readonly NewEvent[]): Promise<number> {
  for (const row of rows) await repos.events.append(row);
  return rows.filter((row) => row.webhookUrl !== null).length;
}
