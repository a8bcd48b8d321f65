import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator, Lock, Unsubscribe } from '../coord/types.ts';
import type { AttemptOutcome, EventRecord, Store } from '../store/types.ts';
import { retryWhileStoreUnavailable } from '../store/unavailable.ts';
import { EVENTS_WRITTEN_CHANNEL } from './announce.ts';
import { type DeliveryResult, WebhookSender, type WebhookSenderOptions } from './delivery.ts';
import {
  type ReplayReport,
  replayEvent,
  sendStoredEvent,
  type ToolTargets,
  type V1SigningKeys,
} from './replay.ts';
import { assertRetrySchedule, DEFAULT_RETRY_SCHEDULE_MS, nextAttemptAt } from './retry-schedule.ts';

/** The coordinator lock that makes one worker the dispatcher. */
export const DISPATCHER_LOCK_KEY = 'events:dispatcher';
/** How long the lock outlives a runner that stopped renewing it (died): the longest pause before a take-over. */
const LOCK_TTL_MS = 30_000;
/** How often a standby worker asks for the lock; with the TTL, a take-over happens within about 35 s. */
const LEADER_RETRY_MS = 5_000;
/**
 * How often an idle runner looks for due events it was not told about (announcements are best effort). Under
 * the shortest default retry gap (1 s), so retries are not late by more than the gap itself.
 */
const POLL_MS = 1_000;
/** Deliveries in flight at once: enough that slow receivers (up to the 5 s timeout) do not hold up the rest. */
const MAX_IN_FLIGHT = 16;
/** How long an attempt's outcome waits for the database to come back before it is given up (and resent). */
const RECORD_RETRY_MS = 300_000;

export interface WebhookDispatcherOptions extends WebhookSenderOptions {
  store: Store;
  coord: Coordinator;
  clock?: Clock;
  /** Delay before each attempt (see retry-schedule.ts); `WEBHOOK_RETRY_SCHEDULE_MS`. */
  retryScheduleMs?: readonly number[];
  /** Tests shorten these; production keeps the defaults above. */
  lockTtlMs?: number;
  leaderRetryMs?: number;
  pollMs?: number;
  maxInFlight?: number;
  reportError?: (error: unknown) => void;
  /** Told once about each event this dispatcher dead-lettered, with its last error (the operator's log line). */
  onDeadLetter?: (dead: DeadLetter) => void;
  /** Renders and records post_call tool deliveries, which ride this outbox. */
  toolTargets?: ToolTargets;
  /** Signs legacy v1 webhooks (their events carry the organization public key). */
  v1Keys?: V1SigningKeys;
}

/** An event given up on: no attempt is scheduled after this one. */
export interface DeadLetter {
  eventId: string;
  type: string;
  workspaceId: string;
  callId: string | null;
  attempts: number;
  status: number | null;
  error: string;
}

function outcomeOf(result: DeliveryResult, retryAt: number | null): AttemptOutcome {
  if (result.ok) return { delivered: true, status: result.status };
  return {
    delivered: false,
    status: result.status,
    error: result.error,
    retryAt: result.permanent ? null : retryAt,
  };
}

/**
 * Delivers the outbox (docs/architecture.md, "Money and events") for the worker role. One runner at a time: the worker holding
 * the coordinator lock `events:dispatcher` (renewed at a third of its TTL) delivers; the others stand by and take
 * over when it lapses. The runner sends due events as they fall due, several at once, wakes early on
 * `events:written` announcements, and records every attempt: delivered on any 2xx, else the next attempt by the
 * retry schedule, else dead letter. `replay` re-sends a stored event now, from any process.
 */
export type { ReplayReport };

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly coord: Coordinator;
  private readonly clock: Clock;
  private readonly schedule: readonly number[];
  private readonly sender: WebhookSender;
  private readonly lockTtlMs: number;
  private readonly leaderRetryMs: number;
  private readonly pollMs: number;
  private readonly maxInFlight: number;
  private readonly reportError: (error: unknown) => void;
  private readonly onDeadLetter: ((dead: DeadLetter) => void) | undefined;
  private readonly toolTargets: ToolTargets | undefined;
  private readonly v1Keys: V1SigningKeys | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private running = false;
  private leading = false;
  private loop: Promise<void> | undefined;
  private unsubscribe: Unsubscribe | undefined;
  private wakeSleeper: (() => void) | undefined;
  private woken = false;

  constructor(options: WebhookDispatcherOptions) {
    this.store = options.store;
    this.coord = options.coord;
    this.clock = options.clock ?? systemClock;
    this.schedule = assertRetrySchedule(options.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS);
    this.sender = new WebhookSender(options);
    this.lockTtlMs = options.lockTtlMs ?? LOCK_TTL_MS;
    this.leaderRetryMs = options.leaderRetryMs ?? LEADER_RETRY_MS;
    this.pollMs = options.pollMs ?? POLL_MS;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.reportError =
      options.reportError ?? ((error) => process.emitWarning(`webhook dispatcher: ${String(error)}`));
    this.onDeadLetter = options.onDeadLetter;
    this.toolTargets = options.toolTargets;
    this.v1Keys = options.v1Keys;
  }

  /** Whether this process is the runner right now. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts standing by for the lock, then delivering while holding it. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = await this.coord.subscribe(EVENTS_WRITTEN_CHANNEL, () => this.wake());
    this.loop = this.run();
  }

  /** Stops delivering, lets attempts in flight finish and record, and gives the lock up. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.inFlight.values()]);
    await this.unsubscribe?.().catch(this.reportError);
    await this.sender.close();
  }

  /** One pass without the lock (tests, one-shot tools): attempts every event due now; returns how many. */
  async deliverDue(limit = this.maxInFlight): Promise<number> {
    const due = (await this.store.events.due(this.clock.now(), limit)).filter(
      (e) => !this.inFlight.has(e.id),
    );
    await Promise.all(due.map((event) => this.track(event)));
    return due.length;
  }

  /** Sends a stored event again now, once (see `replayEvent`). */
  replay(eventId: string): Promise<ReplayReport> {
    return replayEvent(
      {
        store: this.store,
        sender: this.sender,
        clock: this.clock,
        ...(this.toolTargets ? { tools: this.toolTargets } : {}),
        ...(this.v1Keys ? { v1Keys: this.v1Keys } : {}),
      },
      eventId,
    );
  }

  private async run(): Promise<void> {
    while (this.running) {
      let lock: Lock | null = null;
      try {
        lock = await this.coord.lock(DISPATCHER_LOCK_KEY, this.lockTtlMs);
      } catch (error) {
        this.reportError(error);
      }
      if (!lock) {
        await this.sleep(this.leaderRetryMs);
        continue;
      }
      this.leading = true;
      try {
        await this.lead(lock);
      } finally {
        this.leading = false;
        await lock.release().catch(this.reportError);
      }
    }
  }

  /** Delivers while the lock holds; returns when stopped or when the lock was lost. */
  private async lead(lock: Lock): Promise<void> {
    const renewEveryMs = Math.max(1, Math.floor(this.lockTtlMs / 3));
    let renewAt = Date.now() + renewEveryMs;
    while (this.running) {
      if (Date.now() >= renewAt) {
        const kept = await lock.extend(this.lockTtlMs).catch((error: unknown) => {
          this.reportError(error);
          return false;
        });
        if (!kept) return;
        renewAt = Date.now() + renewEveryMs;
      }
      let waitMs = this.pollMs;
      try {
        const started = await this.startDue();
        const nextDue = await this.store.events.nextDueAt();
        const untilDue = nextDue === undefined ? this.pollMs : nextDue - this.clock.now();
        // Something is due already: look again at once if this pass started work (there may be more), else
        // everything due is in flight, and a finishing attempt wakes us, so do not spin on it.
        if (untilDue > 0) waitMs = Math.min(this.pollMs, untilDue);
        else if (started > 0) waitMs = 0;
      } catch (error) {
        this.reportError(error);
      }
      await this.sleep(Math.min(waitMs, Math.max(0, renewAt - Date.now())));
    }
  }

  /** Starts attempts of due events, up to the in-flight limit, without waiting for them; returns how many. */
  private async startDue(): Promise<number> {
    const room = this.maxInFlight - this.inFlight.size;
    if (room <= 0) return 0;
    const due = await this.store.events.due(this.clock.now(), room + this.inFlight.size);
    const fresh = due.filter((e) => !this.inFlight.has(e.id)).slice(0, room);
    for (const event of fresh) void this.track(event).finally(() => this.wake());
    return fresh.length;
  }

  private track(event: EventRecord): Promise<void> {
    const attempt = this.attempt(event).catch(this.reportError);
    const tracked = attempt.finally(() => this.inFlight.delete(event.id));
    this.inFlight.set(event.id, tracked);
    return tracked;
  }

  /** One scheduled attempt, recorded once (the store refuses a second record of the same attempt number). */
  private async attempt(event: EventRecord): Promise<void> {
    const result = await sendStoredEvent(
      this.store,
      this.sender,
      event,
      this.clock.now(),
      this.toolTargets,
      this.v1Keys,
    );
    const attempts = event.attempts + 1;
    const retryAt = nextAttemptAt(attempts, this.clock.now(), this.schedule);
    const outcome = outcomeOf(result, retryAt);
    // The receiver has it now: a record lost to a database outage would send it again, so it waits for the
    // database instead (an outage of seconds; the store refuses a second record of the same attempt).
    const recorded = await retryWhileStoreUnavailable(
      () => this.store.events.recordAttempt(event.id, attempts, outcome),
      { giveUpAfterMs: RECORD_RETRY_MS, onRetry: this.reportError },
    );
    if (recorded && !outcome.delivered && outcome.retryAt === null) {
      this.onDeadLetter?.({
        eventId: event.id,
        type: event.type,
        workspaceId: event.workspaceId,
        callId: event.callId,
        attempts,
        status: outcome.status,
        error: outcome.error,
      });
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleeper = done;
    });
  }

  private wake(): void {
    if (this.wakeSleeper) this.wakeSleeper();
    else this.woken = true;
  }
}
