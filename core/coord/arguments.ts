/** Argument checks shared by both coordinators, so both refuse the same inputs the same way. */

/** A duration in milliseconds: a positive integer. */
export function requireDurationMs(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer of milliseconds, got ${value}`);
  }
}

/** A slot ceiling: a non-negative integer (0 admits nobody). */
export function requireCeiling(value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`ceiling must be a non-negative integer, got ${value}`);
  }
}

/** The start (ms) of the fixed window of `windowMs` that contains `now`; windows are aligned to the epoch. */
export function windowStart(now: number, windowMs: number): number {
  requireDurationMs('windowMs', windowMs);
  return Math.floor(now / windowMs) * windowMs;
}

/** Tally candidates: distinct non-empty members with non-negative integer limits. */
export function requireCandidates(candidates: ReadonlyArray<{ member: string; limit: number }>): void {
  const seen = new Set<string>();
  for (const { member, limit } of candidates) {
    if (member === '' || seen.has(member))
      throw new RangeError(`tally member "${member}" is empty or repeated`);
    if (!Number.isSafeInteger(limit) || limit < 0) {
      throw new RangeError(`tally limit must be a non-negative integer, got ${limit}`);
    }
    seen.add(member);
  }
}
