import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator } from '../coord/types.ts';
import { ApiError, notFound } from '../errors.ts';
import type { PhoneNumberRecord, Store } from '../store/types.ts';
import {
  DAY_MS,
  type HealthState,
  HOUR_MS,
  healthState,
  nextFreeAt,
  numberPace,
  poolPace,
  smoothedAnswerRate,
} from './rules.ts';

/** A number with its health as the API shows it. */
export interface NumberView {
  record: PhoneNumberRecord;
  health: {
    state: HealthState;
    attemptsThisHour: number;
    answers7d: number;
    attempts7d: number;
    restingUntil: number | null;
  };
}

/** The number a call rings from, and the count it took (given back when the call is not admitted). */
export interface PickedNumber {
  phoneNumberId: string;
  from: string;
  poolId: string | null;
  windowStart: number;
}

const paceKey = (workspaceId: string): string => `pace:${workspaceId}`;

/** Beyond any pace: a call placed from a named number counts, but is never refused for pace. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * Attempts per number and hour, counted in the coordinator so that picking a pool's number and counting it are
 * one atomic step on every API node: concurrent calls on one pool never take a number past its pace.
 */
export class Pacer {
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly coord: Coordinator,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  async views(workspaceId: string, records: readonly PhoneNumberRecord[]): Promise<NumberView[]> {
    const now = this.clock.now();
    const ids = records.map((r) => r.id);
    const [counts, stats] = await Promise.all([
      this.coord.tallies.read(paceKey(workspaceId), HOUR_MS, ids),
      this.store.phoneNumbers.callStats(workspaceId, ids, now - 7 * DAY_MS),
    ]);
    return records.map((record, i) => {
      const state = healthState(record, now);
      const week = stats.get(record.id);
      return {
        record,
        health: {
          state,
          attemptsThisHour: counts[i] ?? 0,
          answers7d: week?.answers ?? 0,
          attempts7d: week?.attempts ?? 0,
          restingUntil: state === 'resting' ? record.restingUntil : null,
        },
      };
    });
  }

  /**
   * The pool's number for the next call: among those not resting, cooling or retired and under their pace this
   * hour (warming ones at half), the one with the fewest attempts this hour, ties by best answer rate.
   * `409 pool_busy` with Retry-After when every one is at its pace or resting; `409 pool_unavailable` when none
   * can call at all.
   */
  async pick(workspaceId: string, poolId: string): Promise<PickedNumber> {
    const pool = await this.store.phonePools.get(workspaceId, poolId);
    if (!pool) throw notFound(`pool_id: phone pool ${poolId}`);
    const now = this.clock.now();
    const members = await this.store.phoneNumbers.inPool(workspaceId, poolId);
    const able = members
      .map((record) => ({ record, state: healthState(record, now) }))
      .filter((m) => m.state !== 'cooling' && m.state !== 'retired');
    if (able.length === 0) {
      throw new ApiError(
        'pool_unavailable',
        `pool ${poolId} has no number that can call (${members.length === 0 ? 'it has no numbers' : 'every number is cooling or retired'})`,
      );
    }
    const perHour = poolPace(pool);
    const stats = await this.store.phoneNumbers.callStats(
      workspaceId,
      able.map((m) => m.record.id),
      now - 7 * DAY_MS,
    );
    const rate = (id: string) => {
      const s = stats.get(id);
      return smoothedAnswerRate(s?.answers ?? 0, s?.attempts ?? 0);
    };
    const ready = able
      .filter((m) => m.state !== 'resting')
      .sort((a, b) => rate(b.record.id) - rate(a.record.id));
    const taken = await this.coord.tallies.take(
      paceKey(workspaceId),
      HOUR_MS,
      ready.map((m) => ({ member: m.record.id, limit: numberPace(perHour, m.state) })),
    );
    if (taken) {
      const chosen = able.find((m) => m.record.id === taken.member)?.record as PhoneNumberRecord;
      return { phoneNumberId: chosen.id, from: chosen.number, poolId, windowStart: taken.windowStart };
    }
    const counts = await this.coord.tallies.read(
      paceKey(workspaceId),
      HOUR_MS,
      able.map((m) => m.record.id),
    );
    const freeAt = nextFreeAt(
      able.map((m, i) => ({
        id: m.record.id,
        state: m.state,
        restingUntil: m.record.restingUntil,
        count: counts[i] ?? 0,
        limit: numberPace(perHour, m.state),
      })),
      this.clock.now(),
    );
    if (freeAt === undefined) {
      throw new ApiError(
        'pool_unavailable',
        `pool ${poolId} has no number that can call: every one rests until resumed`,
      );
    }
    throw new ApiError(
      'pool_busy',
      `every number of pool ${poolId} is resting or at its pace this hour (${perHour} an hour per number)`,
      { retryAfterSecs: Math.max(1, Math.ceil((freeAt - this.clock.now()) / 1000)) },
    );
  }

  /** Counts a call from a named number (never refused for pace); a retired number does not call. */
  async direct(workspaceId: string, phoneNumberId: string): Promise<PickedNumber> {
    const record = await this.store.phoneNumbers.get(workspaceId, phoneNumberId);
    if (!record) throw notFound(`phone_number_id: phone number ${phoneNumberId}`);
    if (record.health === 'retired') {
      throw new ApiError('conflict', `phone number ${phoneNumberId} is retired and places no calls`);
    }
    const taken = await this.coord.tallies.take(paceKey(workspaceId), HOUR_MS, [
      { member: record.id, limit: UNLIMITED },
    ]);
    return {
      phoneNumberId: record.id,
      from: record.number,
      poolId: null,
      windowStart: taken?.windowStart ?? Math.floor(this.clock.now() / HOUR_MS) * HOUR_MS,
    };
  }

  /** Gives back the count of a pick whose call was not admitted. */
  async giveBack(workspaceId: string, picked: PickedNumber): Promise<void> {
    await this.coord.tallies.giveBack(
      paceKey(workspaceId),
      HOUR_MS,
      picked.windowStart,
      picked.phoneNumberId,
    );
  }
}
