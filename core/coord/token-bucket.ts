import type { RateLimitResult } from './types.ts';

/**
 * Token bucket arithmetic in integers, so a bucket gives exactly `burst + floor(ratePerSec * elapsedSec)` tokens
 * over an interval with no floating-point drift. The Redis script (`redis-scripts.ts`) mirrors these functions.
 *
 * A token is `TOKEN_UNITS` units; the bucket refills `refillPerMs` units a millisecond. A rate is therefore
 * resolved to 0.001 tokens a second.
 */
export const TOKEN_UNITS = 1_000_000;

export interface BucketShape {
  /** Units a full bucket holds: burst * TOKEN_UNITS. */
  readonly capacity: number;
  /** Units added per millisecond: ratePerSec * TOKEN_UNITS / 1000. */
  readonly refillPerMs: number;
}

export interface BucketState {
  readonly units: number;
  /** Clock time (ms) the units were counted at. */
  readonly at: number;
}

/** Validates the arguments of `Coordinator.rateLimit` and turns them into integer units. */
export function bucketShape(ratePerSec: number, burst: number): BucketShape {
  if (!Number.isInteger(burst) || burst < 1) {
    throw new RangeError(`burst must be a positive integer, got ${burst}`);
  }
  const refillPerMs = Math.round((ratePerSec * TOKEN_UNITS) / 1000);
  if (!Number.isFinite(ratePerSec) || refillPerMs < 1) {
    throw new RangeError(`ratePerSec must be at least 0.001, got ${ratePerSec}`);
  }
  return { capacity: burst * TOKEN_UNITS, refillPerMs };
}

/** The bucket's units at `now`; an unknown bucket is full. A clock that steps back refills nothing. */
export function refill(shape: BucketShape, state: BucketState | undefined, now: number): BucketState {
  if (!state) return { units: shape.capacity, at: now };
  const elapsed = now - state.at;
  if (elapsed <= 0) return state;
  const missing = shape.capacity - state.units;
  if (elapsed * shape.refillPerMs >= missing) return { units: shape.capacity, at: now };
  return { units: state.units + elapsed * shape.refillPerMs, at: now };
}

/** Takes one token from a refilled bucket: the verdict and the state to store. */
export function take(shape: BucketShape, state: BucketState): { result: RateLimitResult; next: BucketState } {
  if (state.units >= TOKEN_UNITS) {
    const units = state.units - TOKEN_UNITS;
    return {
      result: { allowed: true, remaining: Math.floor(units / TOKEN_UNITS) },
      next: { ...state, units },
    };
  }
  const retryAfterMs = Math.ceil((TOKEN_UNITS - state.units) / shape.refillPerMs);
  return { result: { allowed: false, retryAfterMs }, next: state };
}

/** Milliseconds until the bucket is full again; after that its state can be forgotten. */
export function msUntilFull(shape: BucketShape, state: BucketState): number {
  return Math.ceil((shape.capacity - state.units) / shape.refillPerMs);
}
