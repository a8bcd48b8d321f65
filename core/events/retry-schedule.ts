/**
 * The webhook retry schedule (interface "v2 call webhooks", rule 2): `schedule[k]` is the delay before attempt
 * k + 1, the first counted from the event, each later one from the failure before it. Six entries by default,
 * so six attempts over roughly 36 minutes, then the dead-letter queue. Pure.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  0, 1_000, 10_000, 60_000, 300_000, 1_800_000,
]);

/** A schedule is at least one attempt, the first immediate, every delay a whole number of ms. */
export function assertRetrySchedule(schedule: readonly number[]): readonly number[] {
  if (schedule.length === 0) throw new RangeError('retry schedule: at least one attempt');
  if (schedule[0] !== 0)
    throw new RangeError('retry schedule: the first attempt is immediate (start with 0)');
  for (const delay of schedule) {
    if (!Number.isSafeInteger(delay) || delay < 0) throw new RangeError('retry schedule: delays are ms >= 0');
  }
  return schedule;
}

/**
 * When to try again after attempt number `attempts` (1-based) failed at `failedAt`; null when that was the
 * last attempt and the event goes to the dead-letter queue.
 */
export function nextAttemptAt(
  attempts: number,
  failedAt: number,
  schedule: readonly number[],
): number | null {
  const delay = schedule[attempts];
  return delay === undefined ? null : failedAt + delay;
}
