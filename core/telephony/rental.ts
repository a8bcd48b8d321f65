import { type Clock, systemClock } from '../clock.ts';
import { ApiError, invalid, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  InsufficientBalanceError,
  type PhoneNumberRecord,
  type QuoteRecord,
  type Store,
  type SubmissionRecord,
} from '../store/types.ts';
import {
  type AvailableNumber,
  type BusinessDocuments,
  type NumberTypeRequirements,
  TelephonyProviderError,
} from './provider.ts';
import type { TelephonyProviders } from './providers.ts';
import { addMonths, isIndianNumber, QUOTE_TTL_MS, RENTAL, WARMING_MS } from './rules.ts';

/** Results a search returns at most. */
export const SEARCH_LIMIT = 20;

const requireIndian = (field: string, number: string): void => {
  if (!isIndianNumber(number)) throw invalid(field, 'only Indian numbers (+91 and ten digits) are supported');
};

/**
 * Renting managed numbers: the regulator's requirements, the business's documents and their review, searching
 * the provider's numbers, quoting and renting. A rent debits the first three months from the wallet in the
 * transaction that creates the number.
 */
export class RentalService {
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly providers: TelephonyProviders,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  async requirements(workspaceId: string): Promise<{
    numberTypes: NumberTypeRequirements[];
    submission: SubmissionRecord | undefined;
  }> {
    const provider = await this.providers.forWorkspace(workspaceId);
    return {
      numberTypes: provider.requirements(),
      submission: await this.store.telephony.latestSubmission(workspaceId),
    };
  }

  /** Stores the documents and sends them for review; one review at a time, none once approved. */
  async submit(workspaceId: string, documents: BusinessDocuments): Promise<SubmissionRecord> {
    const provider = await this.providers.forWorkspace(workspaceId);
    const latest = await this.store.telephony.latestSubmission(workspaceId);
    if (latest && latest.status !== 'rejected') {
      throw new ApiError(
        'conflict',
        latest.status === 'pending'
          ? `documents ${latest.id} are under review; POST /v2/telephony/refresh reads the review`
          : `documents ${latest.id} are approved already`,
      );
    }
    const { reference } = await provider.submitDocuments(documents);
    return this.store.telephony.insertSubmission({
      id: newId('submission', this.clock.now()),
      workspaceId,
      provider: provider.name,
      providerRef: reference,
      status: 'pending',
      reasons: [],
      content: { ...documents },
      createdAt: this.clock.now(),
    });
  }

  /** Reads the review of the latest documents from the provider. */
  async refresh(workspaceId: string): Promise<SubmissionRecord> {
    const provider = await this.providers.forWorkspace(workspaceId);
    const latest = await this.store.telephony.latestSubmission(workspaceId);
    if (!latest) throw notFound('submission: no documents were submitted; POST /v2/telephony/submit first');
    if (latest.status !== 'pending') return latest;
    const review = await provider.review(latest.providerRef);
    return (await this.store.telephony.setReview(workspaceId, latest.id, review)) ?? latest;
  }

  async search(
    workspaceId: string,
    query: { area?: string | undefined; contains?: string | undefined },
  ): Promise<AvailableNumber[]> {
    const provider = await this.providers.forWorkspace(workspaceId);
    const [found, held] = await Promise.all([
      provider.search(query),
      this.store.phoneNumbers.held(workspaceId),
    ]);
    const taken = new Set(held);
    return found.filter((n) => isIndianNumber(n.number) && !taken.has(n.number)).slice(0, SEARCH_LIMIT);
  }

  async quote(workspaceId: string, number: string): Promise<QuoteRecord> {
    requireIndian('number', number);
    await this.available(workspaceId, number);
    const now = this.clock.now();
    return this.store.telephony.insertQuote({
      id: newId('quote', now),
      workspaceId,
      number,
      amountPaise: RENTAL.periodPaise,
      periodMonths: RENTAL.periodMonths,
      createdAt: now,
      expiresAt: now + QUOTE_TTL_MS,
    });
  }

  /**
   * Rents the quoted number once the documents are approved: the wallet pays the first period in the
   * transaction that creates the number (`402 insufficient_balance` leaves nothing behind).
   */
  async rent(workspaceId: string, number: string, quoteId: string): Promise<PhoneNumberRecord> {
    requireIndian('number', number);
    const provider = await this.providers.forWorkspace(workspaceId);
    const submission = await this.store.telephony.latestSubmission(workspaceId);
    if (submission?.status !== 'approved') {
      throw new ApiError(
        'conflict',
        submission
          ? `documents ${submission.id} are ${submission.status}; numbers are rented once they are approved (POST /v2/telephony/refresh)`
          : 'no documents were submitted; POST /v2/telephony/submit, then refresh until approved',
      );
    }
    const now = this.clock.now();
    const quote = await this.store.telephony.getQuote(workspaceId, quoteId);
    if (!quote || quote.number !== number) throw notFound(`quote_id: quote ${quoteId} for ${number}`);
    if (quote.usedAt !== null) throw new ApiError('conflict', `quote ${quoteId} was used already`);
    if (quote.expiresAt <= now) throw new ApiError('conflict', `quote ${quoteId} expired; ask for a new one`);
    await this.available(workspaceId, number);
    let rental: { reference: string };
    try {
      rental = await provider.rent(number);
    } catch (error) {
      if (error instanceof TelephonyProviderError)
        throw new ApiError('conflict', `${number}: ${error.message}`);
      throw error;
    }
    const id = newId('phoneNumber', now);
    const paidUntil = addMonths(now, quote.periodMonths);
    try {
      return await this.store.transaction(async (repos) => {
        if (!(await repos.telephony.useQuote(workspaceId, quoteId))) {
          throw new ApiError('conflict', `quote ${quoteId} was used already`);
        }
        const created = await repos.phoneNumbers.insert({
          id,
          workspaceId,
          number,
          ownership: 'managed',
          provider: provider.name,
          providerRef: rental.reference,
          state: 'imported',
          setupError: null,
          agentId: null,
          incomingEnabled: false,
          poolId: null,
          health: 'active',
          warmingUntil: now + WARMING_MS,
          paidUntil,
          renewsAt: paidUntil,
        });
        if (created === 'exists') throw new ApiError('conflict', `${number} is already this workspace's`);
        await repos.wallet.debit(workspaceId, {
          amountPaise: quote.amountPaise,
          reference: id,
          kind: 'number_rental',
          description: `rental of ${number}, ${quote.periodMonths} months`,
        });
        return created;
      });
    } catch (error) {
      await provider.release(rental.reference).catch(() => undefined);
      if (error instanceof InsufficientBalanceError) {
        throw new ApiError(
          'insufficient_balance',
          `the wallet cannot cover ₹${quote.amountPaise / 100} for ${number}; top up and retry`,
        );
      }
      throw error;
    }
  }

  /** The number is for rent from the provider and not held by the workspace; else `404 not_found`. */
  private async available(workspaceId: string, number: string): Promise<void> {
    const found = await this.search(workspaceId, { contains: number.slice(3) });
    if (!found.some((n) => n.number === number)) {
      throw notFound(`number: ${number} is not for rent (search with GET /v2/telephony/search)`);
    }
  }
}
