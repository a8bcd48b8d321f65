/**
 * The rules of numbers and pools that need no store: what a number may be, what renting costs, a pool's pace,
 * a number's health as shown, the order a pool tries its numbers in, and when a busy pool frees up.
 */
import type { PhoneNumberRecord, PhonePoolRecord, PoolPurpose } from '../store/telephony-types.ts';

/** Indian numbers only: +91 and ten digits, the first not 0. */
export const INDIAN_NUMBER = /^\+91[1-9]\d{9}$/;

export const isIndianNumber = (value: string): boolean => INDIAN_NUMBER.test(value);

/** ₹500 a month, paid ₹1,500 for three months at a time. */
export const RENTAL = { monthlyPaise: 50_000, periodMonths: 3, periodPaise: 150_000 } as const;

/** How long a quote can be rented with. */
export const QUOTE_TTL_MS = 30 * 60_000;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** A new number warms up (at half its pool's pace) for its first week. */
export const WARMING_MS = 7 * DAY_MS;
/** An automatic rest, and an owner's rest without a length. */
export const REST_MS = 45 * 60_000;

/** Starting pace per number and hour: 40 for support pools, 60 for the rest. */
export function defaultPace(purpose: PoolPurpose): number {
  return purpose === 'support' ? 40 : 60;
}

export const poolPace = (pool: Pick<PhonePoolRecord, 'purpose' | 'maxPerHour'>): number =>
  pool.maxPerHour ?? defaultPace(pool.purpose);

export type HealthState = 'active' | 'warming' | 'resting' | 'cooling' | 'retired';

/** The health a number shows at `now`: what was set, with a rest that ended and a first week read in. */
export function healthState(
  n: Pick<PhoneNumberRecord, 'health' | 'restingUntil' | 'warmingUntil'>,
  now: number,
): HealthState {
  if (n.health === 'retired' || n.health === 'cooling') return n.health;
  if (n.health === 'resting' && (n.restingUntil === null || n.restingUntil > now)) return 'resting';
  return now < n.warmingUntil ? 'warming' : 'active';
}

/** A number's pace in its pool: warming numbers at half (at least one an hour). */
export function numberPace(poolPerHour: number, state: HealthState): number {
  return state === 'warming' ? Math.max(1, Math.floor(poolPerHour / 2)) : poolPerHour;
}

/** Answer rate with one answer and one miss assumed, so a number without calls sits in the middle. */
export const smoothedAnswerRate = (answers: number, attempts: number): number =>
  (answers + 1) / (attempts + 2);

/** The start of the next calendar month `months` on (UTC), the same day of month or its last day. */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const target = new Date(
    Date.UTC(
      d.getUTCFullYear(),
      d.getUTCMonth() + months,
      1,
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ),
  );
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime();
}

export interface PaceView {
  id: string;
  state: HealthState;
  restingUntil: number | null;
  count: number;
  limit: number;
}

/**
 * When the first of a busy pool's numbers can call again: a number at its pace frees at the next hour, a resting
 * one when its rest ends (and, at its pace too, at whichever comes later, unless its rest outlasts the hour).
 * Undefined when none ever will by itself (every one rests until its owner resumes it).
 */
export function nextFreeAt(numbers: readonly PaceView[], now: number): number | undefined {
  const hourEnds = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  let first: number | undefined;
  for (const n of numbers) {
    let at: number;
    if (n.state === 'resting') {
      if (n.restingUntil === null) continue;
      at = n.count >= n.limit && n.restingUntil < hourEnds ? hourEnds : n.restingUntil;
    } else {
      at = n.count >= n.limit ? hourEnds : now;
    }
    first = first === undefined ? at : Math.min(first, at);
  }
  return first;
}
