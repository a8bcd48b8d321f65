import type { JsonObject, Page } from './values.ts';

export type NumberOwnership = 'managed' | 'customer';
export type NumberState = 'imported' | 'ready' | 'error';
/** Health as stored: what the owner or the pacer set. `warming` is derived from `warmingUntil`. */
export type StoredHealth = 'active' | 'resting' | 'cooling' | 'retired';
export type PoolPurpose = 'outreach' | 'reminders' | 'support' | 'other';
export type ReviewStatus = 'pending' | 'approved' | 'rejected';

export interface PhoneNumberRecord {
  id: string;
  workspaceId: string;
  number: string;
  ownership: NumberOwnership;
  provider: string;
  providerRef: string;
  state: NumberState;
  setupError: string | null;
  agentId: string | null;
  incomingEnabled: boolean;
  poolId: string | null;
  version: number;
  health: StoredHealth;
  /** Until when a `resting` number rests; null for a rest that lasts until the owner resumes it. */
  restingUntil: number | null;
  /** When its automatic rests of the last day began. */
  rests: number[];
  warmingUntil: number;
  paidUntil: number | null;
  renewsAt: number | null;
  /** Set when the owner deleted a managed number: it is released then (the end of its paid period). */
  releasesAt: number | null;
  /** An imported number's provider credentials, sealed (core/secrets/cipher.ts); null for managed numbers. */
  providerSecret: string | null;
  /** An imported number's incoming-call address at its provider before ours; restored on delete. */
  previousVoiceUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

export type NewPhoneNumber = Omit<
  PhoneNumberRecord,
  | 'version'
  | 'createdAt'
  | 'updatedAt'
  | 'rests'
  | 'restingUntil'
  | 'releasesAt'
  | 'providerSecret'
  | 'previousVoiceUrl'
> & { providerSecret?: string | null; previousVoiceUrl?: string | null };

/** What a change may set; everything else of a number is fixed. */
export type PhoneNumberChange = Partial<
  Pick<
    PhoneNumberRecord,
    | 'state'
    | 'setupError'
    | 'agentId'
    | 'incomingEnabled'
    | 'poolId'
    | 'health'
    | 'restingUntil'
    | 'rests'
    | 'paidUntil'
    | 'renewsAt'
    | 'releasesAt'
    | 'previousVoiceUrl'
  >
>;

/** A number's calls since a time: attempts (calls placed from it) and answers (calls whose media went live). */
export interface NumberCallStats {
  attempts: number;
  answers: number;
}

/**
 * Numbers a workspace holds. Released numbers (and those past `releasesAt`) are never returned.
 * Every change raises `version` by one; `change` refuses a stale expected version with 'conflict'.
 */
export interface PhoneNumberRepo {
  /** 'exists' when the workspace already holds the number. */
  insert(record: NewPhoneNumber): Promise<PhoneNumberRecord | 'exists'>;
  get(workspaceId: string, id: string): Promise<PhoneNumberRecord | undefined>;
  /**
   * By id alone, across workspaces: only for a caller that proves itself otherwise (a provider's signed
   * incoming-call webhook, checked with the number's own credentials). Everything a tenant asks goes through `get`.
   */
  findById(id: string): Promise<PhoneNumberRecord | undefined>;
  /** Newest first; `after` is the id of the last item of the previous page. */
  list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<PhoneNumberRecord>>;
  /** The named numbers the workspace holds (others are left out). */
  many(workspaceId: string, ids: readonly string[]): Promise<PhoneNumberRecord[]>;
  inPool(workspaceId: string, poolId: string): Promise<PhoneNumberRecord[]>;
  /** Every number (E.164) the workspace holds. */
  held(workspaceId: string): Promise<string[]>;
  /**
   * Read-modify-write in one transaction: `change` gets the current record (it may throw to refuse) and returns
   * what to set. 'conflict' when `version` is given and is not the current one.
   */
  change(
    workspaceId: string,
    id: string,
    options: { version?: number; change: (current: PhoneNumberRecord) => PhoneNumberChange },
  ): Promise<PhoneNumberRecord | 'not_found' | 'conflict'>;
  /** Makes `ids` the pool's numbers: the others leave it. Each number that joins or leaves is a change. */
  setPool(workspaceId: string, poolId: string, ids: readonly string[]): Promise<void>;
  /** Calls placed from each of `ids` since `since` (ms). */
  callStats(
    workspaceId: string,
    ids: readonly string[],
    since: number,
  ): Promise<Map<string, NumberCallStats>>;
  /** Each number's last `last` ended calls: how many, and how many were answered. */
  recentStats(
    workspaceId: string,
    ids: readonly string[],
    last: number,
  ): Promise<Map<string, NumberCallStats>>;
  /** Managed numbers of every workspace whose renewal is due at `now` (not being released), oldest first. */
  dueForRenewal(now: number, limit: number): Promise<PhoneNumberRecord[]>;
  /** Numbers of every workspace past their `releasesAt` and not yet marked released. */
  dueForRelease(now: number, limit: number): Promise<PhoneNumberRecord[]>;
  markReleased(workspaceId: string, id: string): Promise<boolean>;
}

export interface PhonePoolRecord {
  id: string;
  workspaceId: string;
  name: string;
  purpose: PoolPurpose;
  maxPerHour: number | null;
  defaultForCampaigns: boolean;
  createdAt: number;
  updatedAt: number;
}

export type PhonePoolChange = Partial<
  Pick<PhonePoolRecord, 'name' | 'purpose' | 'maxPerHour' | 'defaultForCampaigns'>
>;

export interface PhonePoolRepo {
  create(
    workspaceId: string,
    input: Pick<PhonePoolRecord, 'name' | 'purpose' | 'maxPerHour' | 'defaultForCampaigns'>,
  ): Promise<PhonePoolRecord>;
  get(workspaceId: string, id: string): Promise<PhonePoolRecord | undefined>;
  /** Newest first; `after` is the id of the last item of the previous page. */
  list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<PhonePoolRecord>>;
  update(workspaceId: string, id: string, change: PhonePoolChange): Promise<PhonePoolRecord | undefined>;
  /** No other pool of the workspace is the campaigns' default. */
  clearDefault(workspaceId: string, exceptId: string): Promise<void>;
  /** The pool campaigns ring from when they name none (`default_for_campaigns`). */
  campaignDefault(workspaceId: string): Promise<PhonePoolRecord | undefined>;
  remove(workspaceId: string, id: string): Promise<boolean>;
}

export interface SubmissionRecord {
  id: string;
  workspaceId: string;
  provider: string;
  providerRef: string;
  status: ReviewStatus;
  reasons: string[];
  content: JsonObject;
  createdAt: number;
  updatedAt: number;
  reviewedAt: number | null;
}

export interface QuoteRecord {
  id: string;
  workspaceId: string;
  number: string;
  amountPaise: number;
  periodMonths: number;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

/** The rent flow's records: document submissions and their review, and quotes. */
export interface TelephonyRepo {
  insertSubmission(record: Omit<SubmissionRecord, 'updatedAt' | 'reviewedAt'>): Promise<SubmissionRecord>;
  latestSubmission(workspaceId: string): Promise<SubmissionRecord | undefined>;
  setReview(
    workspaceId: string,
    id: string,
    review: { status: ReviewStatus; reasons: string[] },
  ): Promise<SubmissionRecord | undefined>;
  insertQuote(record: Omit<QuoteRecord, 'usedAt'>): Promise<QuoteRecord>;
  getQuote(workspaceId: string, id: string): Promise<QuoteRecord | undefined>;
  /** Marks an unused quote used; false when it was used already (by a concurrent rent). */
  useQuote(workspaceId: string, id: string): Promise<boolean>;
}
