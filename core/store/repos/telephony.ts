import type { TelephonyQuotesTable, TelephonySubmissionsTable } from '../db.ts';
import type { Scope } from '../scope.ts';
import type { QuoteRecord, ReviewStatus, SubmissionRecord, TelephonyRepo } from '../telephony-types.ts';

const toSubmission = (row: TelephonySubmissionsTable): SubmissionRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  provider: row.provider,
  providerRef: row.provider_ref,
  status: row.status,
  reasons: JSON.parse(row.reasons) as string[],
  content: JSON.parse(row.content),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  reviewedAt: row.reviewed_at === null ? null : Number(row.reviewed_at),
});

const toQuote = (row: TelephonyQuotesTable): QuoteRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  number: row.number,
  amountPaise: Number(row.amount_paise),
  periodMonths: Number(row.period_months),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  usedAt: row.used_at === null ? null : Number(row.used_at),
});

/** The rent flow's records: document submissions with their review, and quotes. */
export class TelephonyStore implements TelephonyRepo {
  constructor(private readonly scope: Scope) {}

  async insertSubmission(
    record: Omit<SubmissionRecord, 'updatedAt' | 'reviewedAt'>,
  ): Promise<SubmissionRecord> {
    const row: TelephonySubmissionsTable = {
      id: record.id,
      workspace_id: record.workspaceId,
      provider: record.provider,
      provider_ref: record.providerRef,
      status: record.status,
      reasons: JSON.stringify(record.reasons),
      content: JSON.stringify(record.content),
      created_at: record.createdAt,
      updated_at: record.createdAt,
      reviewed_at: null,
    };
    await this.scope.db.insertInto('telephony_submissions').values(row).execute();
    return toSubmission(row);
  }

  async latestSubmission(workspaceId: string): Promise<SubmissionRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('telephony_submissions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toSubmission(row) : undefined;
  }

  async setReview(
    workspaceId: string,
    id: string,
    review: { status: ReviewStatus; reasons: string[] },
  ): Promise<SubmissionRecord | undefined> {
    const now = this.scope.now;
    await this.scope.db
      .updateTable('telephony_submissions')
      .set({
        status: review.status,
        reasons: JSON.stringify(review.reasons),
        updated_at: now,
        reviewed_at: review.status === 'pending' ? null : now,
      })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .execute();
    const row = await this.scope.db
      .selectFrom('telephony_submissions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toSubmission(row) : undefined;
  }

  async insertQuote(record: Omit<QuoteRecord, 'usedAt'>): Promise<QuoteRecord> {
    const row: TelephonyQuotesTable = {
      id: record.id,
      workspace_id: record.workspaceId,
      number: record.number,
      amount_paise: record.amountPaise,
      period_months: record.periodMonths,
      created_at: record.createdAt,
      expires_at: record.expiresAt,
      used_at: null,
    };
    await this.scope.db.insertInto('telephony_quotes').values(row).execute();
    return toQuote(row);
  }

  async getQuote(workspaceId: string, id: string): Promise<QuoteRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('telephony_quotes')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toQuote(row) : undefined;
  }

  async useQuote(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.scope.db
      .updateTable('telephony_quotes')
      .set({ used_at: this.scope.now })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }
}
