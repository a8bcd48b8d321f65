import type { CallRecord, PhoneNumberRecord, Repositories } from '../store/types.ts';
import { DAY_MS, healthState, REST_MS } from './rules.ts';

/** The attempts a number's answer rate is judged over. */
export const HEALTH_WINDOW = 20;
/** A pool-mate counts toward the median once it has this many ended calls. */
const MATE_MIN_ATTEMPTS = 5;
/** Rests within a day that make a number cool down until its owner resumes it. */
export const RESTS_BEFORE_COOLING = 3;

export type HealthChange = { id: string; to: 'resting' | 'cooling' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * A number's health after one of its calls settled, in the settlement's transaction: a pool's number rests
 * `REST_MS` when its answer rate over its last `HEALTH_WINDOW` calls falls below half its pool-mates' median;
 * its third rest within a day makes it `cooling` until the owner resumes it. Returns what changed, if anything.
 */
export async function judgeNumberAfterCall(
  repos: Pick<Repositories, 'phoneNumbers'>,
  call: Pick<CallRecord, 'workspaceId' | 'phoneNumberId'>,
  now: number,
): Promise<HealthChange | undefined> {
  if (call.phoneNumberId === null) return undefined;
  const number = await repos.phoneNumbers.get(call.workspaceId, call.phoneNumberId);
  if (!number || number.poolId === null) return undefined;
  const state = healthState(number, now);
  if (state === 'resting' || state === 'cooling' || state === 'retired') return undefined;
  const pool = await repos.phoneNumbers.inPool(call.workspaceId, number.poolId);
  const stats = await repos.phoneNumbers.recentStats(
    call.workspaceId,
    pool.map((n) => n.id),
    HEALTH_WINDOW,
  );
  const own = stats.get(number.id);
  if (!own || own.attempts < HEALTH_WINDOW) return undefined;
  const mates = pool
    .filter((n) => n.id !== number.id)
    .map((n) => stats.get(n.id))
    .filter((s) => s !== undefined && s.attempts >= MATE_MIN_ATTEMPTS)
    .map((s) => (s as { answers: number; attempts: number }).answers / (s as { attempts: number }).attempts);
  if (mates.length === 0) return undefined;
  if (own.answers / own.attempts >= median(mates) / 2) return undefined;
  return rest(repos, number, now);
}

async function rest(
  repos: Pick<Repositories, 'phoneNumbers'>,
  number: PhoneNumberRecord,
  now: number,
): Promise<HealthChange | undefined> {
  const rests = [...number.rests.filter((at) => at > now - DAY_MS), now];
  const cooling = rests.length >= RESTS_BEFORE_COOLING;
  const result = await repos.phoneNumbers.change(number.workspaceId, number.id, {
    change: () =>
      cooling
        ? { health: 'cooling', restingUntil: null, rests }
        : { health: 'resting', restingUntil: now + REST_MS, rests },
  });
  return typeof result === 'object' ? { id: number.id, to: cooling ? 'cooling' : 'resting' } : undefined;
}
