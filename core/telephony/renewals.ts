import type { Logger } from 'pino';
import { type Clock, isoTime, systemClock } from '../clock.ts';
import { InsufficientBalanceError, type PhoneNumberRecord, type Store } from '../store/types.ts';
import type { TelephonyProvider } from './provider.ts';
import { addMonths, DAY_MS, RENTAL } from './rules.ts';

/** Days a renewal the wallet cannot cover is retried (daily) before the number is released. */
export const RENEWAL_GRACE_DAYS = 7;
const BATCH = 100;

export type RenewalOutcome =
  | { id: string; outcome: 'renewed'; paidUntil: number }
  | { id: string; outcome: 'retry'; renewsAt: number }
  | { id: string; outcome: 'released' };

/** The ledger reference of one period's renewal: one charge per number and period, whoever runs it. */
export const renewalReference = (id: string, periodStart: number): string =>
  `${id}:renewal:${isoTime(periodStart).slice(0, 10)}`;

/**
 * Renews managed numbers from the wallet every three months and releases the numbers whose time is up. Each
 * renewal is one transaction: the debit (idempotent on the period's reference) and the number's new paid period
 * (conditional on the period it renews), so two workers or a restart never charge a period twice. A renewal the
 * wallet cannot cover is retried daily for `RENEWAL_GRACE_DAYS`, then the number is released.
 */
export class NumberRenewals {
  private readonly clock: Clock;

  constructor(
    private readonly deps: {
      store: Store;
      providers: Record<string, TelephonyProvider>;
      logger: Pick<Logger, 'info' | 'warn'>;
      clock?: Clock;
    },
  ) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Renews every number that is due and releases every number whose time is up; returns what it did. */
  async sweep(): Promise<RenewalOutcome[]> {
    const outcomes: RenewalOutcome[] = [];
    const now = this.clock.now();
    for (const number of await this.deps.store.phoneNumbers.dueForRenewal(now, BATCH)) {
      const outcome = await this.renew(number, now);
      if (outcome) outcomes.push(outcome);
    }
    for (const number of await this.deps.store.phoneNumbers.dueForRelease(now, BATCH)) {
      if (await this.release(number)) outcomes.push({ id: number.id, outcome: 'released' });
    }
    return outcomes;
  }

  private async renew(number: PhoneNumberRecord, now: number): Promise<RenewalOutcome | undefined> {
    const periodStart = number.paidUntil ?? number.renewsAt ?? now;
    const paidUntil = addMonths(periodStart, RENTAL.periodMonths);
    const log = { workspace_id: number.workspaceId, phone_number_id: number.id, number: number.number };
    try {
      const renewed = await this.deps.store.transaction(async (repos) => {
        const entry = await repos.wallet.debit(number.workspaceId, {
          amountPaise: RENTAL.periodPaise,
          reference: renewalReference(number.id, periodStart),
          kind: 'number_rental',
          description: `renewal of ${number.number}, ${RENTAL.periodMonths} months from ${isoTime(periodStart).slice(0, 10)}`,
        });
        const result = await repos.phoneNumbers.change(number.workspaceId, number.id, {
          change: (current) => {
            if (current.paidUntil !== number.paidUntil || current.releasesAt !== null)
              throw new PeriodMoved();
            return { paidUntil, renewsAt: paidUntil };
          },
        });
        return typeof result === 'object' ? entry : undefined;
      });
      if (!renewed) return undefined;
      this.deps.logger.info(
        { ...log, paid_until: isoTime(paidUntil), ledger_id: renewed.id },
        'phone number renewed',
      );
      return { id: number.id, outcome: 'renewed', paidUntil };
    } catch (error) {
      if (error instanceof PeriodMoved) return undefined;
      if (!(error instanceof InsufficientBalanceError)) throw error;
    }
    const giveUpAt = periodStart + RENEWAL_GRACE_DAYS * DAY_MS;
    if (now >= giveUpAt) {
      await this.deps.store.phoneNumbers.change(number.workspaceId, number.id, {
        change: () => ({ renewsAt: null, releasesAt: now }),
      });
      this.deps.logger.warn(log, 'phone number released: the wallet could not cover its renewal for 7 days');
      await this.release({ ...number, releasesAt: now });
      return { id: number.id, outcome: 'released' };
    }
    const renewsAt = Math.min(now + DAY_MS, giveUpAt);
    await this.deps.store.phoneNumbers.change(number.workspaceId, number.id, {
      change: () => ({ renewsAt }),
    });
    this.deps.logger.warn(
      { ...log, retry_at: isoTime(renewsAt) },
      'phone number renewal: the wallet cannot cover it; retrying',
    );
    return { id: number.id, outcome: 'retry', renewsAt };
  }

  private async release(number: PhoneNumberRecord): Promise<boolean> {
    await this.deps.providers[number.provider]?.release(number.providerRef);
    const released = await this.deps.store.phoneNumbers.markReleased(number.workspaceId, number.id);
    if (released) {
      this.deps.logger.info(
        { workspace_id: number.workspaceId, phone_number_id: number.id, number: number.number },
        'phone number released',
      );
    }
    return released;
  }
}

/** Another run renewed or released the number meanwhile. */
class PeriodMoved extends Error {}
