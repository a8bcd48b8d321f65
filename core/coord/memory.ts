import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../clock.ts';
import { requireCandidates, requireCeiling, requireDurationMs, windowStart } from './arguments.ts';
import { ChannelHandlers, type MessageHandler, type ReportError, warnOnError } from './channel-handlers.ts';
import { ExpiringMap } from './expiring-map.ts';
import { type BucketState, bucketShape, msUntilFull, refill, take } from './token-bucket.ts';
import type {
  Coordinator,
  Counters,
  Lock,
  RateLimitResult,
  Slots,
  Tallies,
  TallyCandidate,
  TallyTaken,
  Unsubscribe,
} from './types.ts';

export interface MemoryCoordinatorOptions {
  clock?: Clock;
  /** Receives errors thrown by subscribers' handlers; defaults to a process warning. */
  reportError?: ReportError;
}

/**
 * The coordinator of a single process: the same behaviour as the Redis one, kept in maps. Everything expires
 * lazily against the injected clock, so no timer runs and a manual clock in tests moves every deadline.
 */
export class MemoryCoordinator implements Coordinator {
  readonly kind = 'memory' as const;
  readonly slots: Slots;
  readonly counters: Counters;
  readonly tallies: Tallies;
  private readonly clock: Clock;
  private readonly buckets = new ExpiringMap<BucketState>();
  /** Scope -> holder -> lease deadline (ms); the entry expires with its last lease. */
  private readonly leases = new ExpiringMap<Map<string, number>>();
  private readonly counts = new ExpiringMap<number>();
  /** Tally key and window -> member -> count; the entry expires with its window. */
  private readonly tallyCounts = new ExpiringMap<Map<string, number>>();
  /** Lock key -> owner token; the entry expires at the lock's deadline. */
  private readonly lockOwners = new ExpiringMap<string>();
  private readonly handlers: ChannelHandlers;
  private closed = false;

  constructor(options: MemoryCoordinatorOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.handlers = new ChannelHandlers(options.reportError ?? warnOnError);
    this.slots = {
      acquire: async (scope, ceiling, holderId, leaseMs) =>
        this.acquireSlot(scope, ceiling, holderId, leaseMs),
      renew: async (scope, holderId, leaseMs) => this.renewSlot(scope, holderId, leaseMs),
      hold: async (scope, holderId, leaseMs) => this.holdSlot(scope, holderId, leaseMs),
      release: async (scope, holderId) => this.releaseSlot(scope, holderId),
      holders: async (scope) => [...this.liveLeases(scope, this.clock.now()).keys()].sort(),
    };
    this.counters = {
      incr: async (key, windowMs) => this.addToCount(key, windowMs),
      get: async (key, windowMs) => {
        const now = this.clock.now();
        return this.counts.get(countKey(key, windowMs, now), now) ?? 0;
      },
    };
    this.tallies = {
      take: async (key, windowMs, candidates) => this.takeLeast(key, windowMs, candidates),
      giveBack: async (key, windowMs, start, member) => {
        const counts = this.tallyCounts.get(countKey(key, windowMs, start), this.clock.now());
        const count = counts?.get(member) ?? 0;
        if (counts && count > 0) counts.set(member, count - 1);
      },
      read: async (key, windowMs, members) => {
        const counts = this.tallyCounts.get(countKey(key, windowMs, this.clock.now()), this.clock.now());
        return members.map((m) => counts?.get(m) ?? 0);
      },
    };
  }

  async rateLimit(key: string, ratePerSec: number, burst: number): Promise<RateLimitResult> {
    const shape = bucketShape(ratePerSec, burst);
    const now = this.clock.now();
    const { result, next } = take(shape, refill(shape, this.buckets.get(key, now), now));
    this.buckets.set(key, next, now + msUntilFull(shape, next), now);
    return result;
  }

  async lock(key: string, ttlMs: number): Promise<Lock | null> {
    requireDurationMs('ttlMs', ttlMs);
    const now = this.clock.now();
    if (this.lockOwners.get(key, now) !== undefined) return null;
    const owner = randomUUID();
    this.lockOwners.set(key, owner, now + ttlMs, now);
    return {
      key,
      extend: async (extendMs) => {
        requireDurationMs('ttlMs', extendMs);
        const at = this.clock.now();
        if (this.lockOwners.get(key, at) !== owner) return false;
        this.lockOwners.set(key, owner, at + extendMs, at);
        return true;
      },
      release: async () => {
        if (this.lockOwners.get(key, this.clock.now()) === owner) this.lockOwners.delete(key);
      },
    };
  }

  /** Delivers on a later microtask, so a publisher never runs its subscribers' code. */
  async publish(channel: string, message: string): Promise<void> {
    queueMicrotask(() => this.handlers.deliver(channel, message));
  }

  async subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe> {
    const { subscription } = this.handlers.add(channel, handler);
    return async () => {
      this.handlers.remove(channel, subscription);
    };
  }

  /** Its state and every holder of it live in this one process: as old as any holder can be. */
  async stateSince(): Promise<number> {
    return Number.NEGATIVE_INFINITY;
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.buckets.clear();
    this.leases.clear();
    this.counts.clear();
    this.tallyCounts.clear();
    this.lockOwners.clear();
  }

  private acquireSlot(scope: string, ceiling: number, holderId: string, leaseMs: number): boolean {
    requireCeiling(ceiling);
    requireDurationMs('leaseMs', leaseMs);
    const now = this.clock.now();
    const leases = this.liveLeases(scope, now);
    if (!leases.has(holderId) && leases.size >= ceiling) return false;
    leases.set(holderId, now + leaseMs);
    this.storeLeases(scope, leases, now);
    return true;
  }

  private renewSlot(scope: string, holderId: string, leaseMs: number): boolean {
    requireDurationMs('leaseMs', leaseMs);
    const now = this.clock.now();
    const leases = this.liveLeases(scope, now);
    if (!leases.has(holderId)) return false;
    leases.set(holderId, now + leaseMs);
    this.storeLeases(scope, leases, now);
    return true;
  }

  private holdSlot(scope: string, holderId: string, leaseMs: number): void {
    requireDurationMs('leaseMs', leaseMs);
    const now = this.clock.now();
    const leases = this.liveLeases(scope, now);
    leases.set(holderId, now + leaseMs);
    this.storeLeases(scope, leases, now);
  }

  private releaseSlot(scope: string, holderId: string): void {
    const now = this.clock.now();
    const leases = this.liveLeases(scope, now);
    if (leases.delete(holderId)) this.storeLeases(scope, leases, now);
  }

  /** The scope's leases with the expired ones (deadline reached) dropped. */
  private liveLeases(scope: string, now: number): Map<string, number> {
    const leases = this.leases.get(scope, now) ?? new Map<string, number>();
    for (const [holderId, deadline] of leases) {
      if (deadline <= now) leases.delete(holderId);
    }
    return leases;
  }

  private storeLeases(scope: string, leases: Map<string, number>, now: number): void {
    if (leases.size === 0) {
      this.leases.delete(scope);
      return;
    }
    this.leases.set(scope, leases, Math.max(...leases.values()), now);
  }

  private takeLeast(key: string, windowMs: number, candidates: readonly TallyCandidate[]): TallyTaken | null {
    requireCandidates(candidates);
    const now = this.clock.now();
    const start = windowStart(now, windowMs);
    const id = countKey(key, windowMs, now);
    const counts = this.tallyCounts.get(id, now) ?? new Map<string, number>();
    const best = leastUnderLimit(counts, candidates);
    if (!best) return null;
    counts.set(best.member, best.count + 1);
    this.tallyCounts.set(id, counts, start + windowMs, now);
    return { member: best.member, count: best.count + 1, windowStart: start };
  }

  private addToCount(key: string, windowMs: number): number {
    const now = this.clock.now();
    const start = windowStart(now, windowMs);
    const id = countKey(key, windowMs, now);
    const count = (this.counts.get(id, now) ?? 0) + 1;
    this.counts.set(id, count, start + windowMs, now);
    return count;
  }
}

function leastUnderLimit(
  counts: Map<string, number> | undefined,
  candidates: readonly TallyCandidate[],
): { member: string; count: number } | null {
  let best: { member: string; count: number } | null = null;
  for (const { member, limit } of candidates) {
    const count = counts?.get(member) ?? 0;
    if (count < limit && (best === null || count < best.count)) best = { member, count };
  }
  return best;
}

/** One counter per key, window length and window. */
function countKey(key: string, windowMs: number, now: number): string {
  return `${windowMs}:${windowStart(now, windowMs)}:${key}`;
}
