/**
 * Coordination between the processes of one deployment (docs/architecture.md, "Coordination").
 * Two implementations pass one conformance suite: memory (one process) and Redis (many).
 */
export type RateLimitResult = { allowed: true; remaining: number } | { allowed: false; retryAfterMs: number };

export interface Slots {
  /** Take one of `ceiling` slots of `scope` for `holderId` until `leaseMs` from now. Re-acquiring a held slot renews it. */
  acquire(scope: string, ceiling: number, holderId: string, leaseMs: number): Promise<boolean>;
  /**
   * Take or renew `holderId`'s slot whatever the ceiling: for a holder that is live by fact and re-asserts a slot
   * the coordinator lost (a Redis restart without persistence, a flush, a failover to a copy without it).
   */
  hold(scope: string, holderId: string, leaseMs: number): Promise<void>;
  /** Extend a held slot's lease; false when the slot is no longer held (expired or released). */
  renew(scope: string, holderId: string, leaseMs: number): Promise<boolean>;
  release(scope: string, holderId: string): Promise<void>;
  /** Holders whose lease has not expired. */
  holders(scope: string): Promise<string[]>;
}

export interface Counters {
  /** Add one to the counter of the fixed window containing now; returns the count after adding. */
  incr(key: string, windowMs: number): Promise<number>;
  get(key: string, windowMs: number): Promise<number>;
}

/** One member a tally may count: its identity and the most it may count in a window. */
export interface TallyCandidate {
  member: string;
  limit: number;
}

export interface TallyTaken {
  member: string;
  /** The member's count in the window after this take. */
  count: number;
  /** The start (ms) of the window the take counted in; `giveBack` names it. */
  windowStart: number;
}

/**
 * Per-window counts of the members of a set (the attempts of a pool's numbers this hour): one key holds many
 * members' counts, and choosing a member is atomic with counting it, across processes.
 */
export interface Tallies {
  /**
   * Of `candidates` (in order of preference), counts one for the member with the fewest counted in the fixed
   * window of `windowMs` containing now, among those under their `limit`; ties go to the earlier candidate.
   * Null when every candidate is at its limit. Concurrent takes never count a member past its limit.
   */
  take(key: string, windowMs: number, candidates: readonly TallyCandidate[]): Promise<TallyTaken | null>;
  /** Takes back one count of `member` in the window that started at `windowStart` (a take whose use failed). */
  giveBack(key: string, windowMs: number, windowStart: number, member: string): Promise<void>;
  /** The counts of `members` in the window containing now, in their order (0 for a member never counted). */
  read(key: string, windowMs: number, members: readonly string[]): Promise<number[]>;
}

export interface Lock {
  readonly key: string;
  /** Extend the lock; false when it was lost: its TTL ran out (and another may have taken it since). */
  extend(ttlMs: number): Promise<boolean>;
  release(): Promise<void>;
}

export type Unsubscribe = () => Promise<void>;

export interface Coordinator {
  readonly kind: 'memory' | 'redis';
  /** Token bucket: `burst` tokens, refilled at `ratePerSec`. */
  rateLimit(key: string, ratePerSec: number, burst: number): Promise<RateLimitResult>;
  readonly slots: Slots;
  readonly counters: Counters;
  readonly tallies: Tallies;
  /** Take `key` exclusively for `ttlMs`; null when someone else holds it. */
  lock(key: string, ttlMs: number): Promise<Lock | null>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, handler: (message: string) => void): Promise<Unsubscribe>;
  /**
   * When the coordinator's shared state began (ms, its clock): a Redis restart that lost its keys, a flush or a
   * failover to a copy without them begins it again. Until a holder has had a lease's time to re-assert its
   * slots, a missing slot is no evidence that the holder is gone. The memory coordinator's state lives and dies
   * with the one process that holds every slot in it, so it has been there as long as any holder: -Infinity.
   */
  stateSince(): Promise<number>;
  /** Whether the backing service answers (for /healthz). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
