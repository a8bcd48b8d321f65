/**
 * What the rest of the platform needs from the store. The Kysely implementation serves SQLite and
 * PostgreSQL behind these interfaces; one conformance suite runs on both.
 * Times are epoch milliseconds; money is integer paise.
 */
import type { CallRepo, EventRepo } from './call-types.ts';
import type { CampaignRepo } from './campaign-types.ts';
import type { DncRepo } from './dnc-types.ts';
import type { FlowJobRepo } from './flow-job-types.ts';
import type { SpeechRepo } from './speech-types.ts';
import type { PhoneNumberRepo, PhonePoolRepo, TelephonyRepo } from './telephony-types.ts';
import type { ToolRunRepo, ToolSecretRepo } from './tool-types.ts';
import type { TranscriptionRepo } from './transcription-types.ts';
import type { V1Repo } from './v1-types.ts';
import type { JsonObject, Page } from './values.ts';

export * from './call-types.ts';
export * from './campaign-types.ts';
export * from './dnc-types.ts';
export * from './flow-job-types.ts';
export * from './speech-types.ts';
export * from './telephony-types.ts';
export * from './tool-types.ts';
export * from './transcription-types.ts';

export type { JsonObject, Page } from './values.ts';
export type WorkspaceMode = 'sandbox' | 'production';

export interface Workspace {
  id: string;
  name: string;
  mode: WorkspaceMode;
  /** Operator-enabled `call.queued` events. */
  queuedEventsEnabled: boolean;
  /** Campaigns and the do-not-call list; on unless the operator turned them off. */
  campaignsEnabled: boolean;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  /** First characters of the key, for operators to recognise it; never the key itself. */
  prefix: string;
  revokedAt: number | null;
  createdAt: number;
}

export interface WebhookSecret {
  secret: string;
  createdAt: number;
  /** Set when rotated out; the secret stays valid until then (overlap). */
  expiresAt: number | null;
}

export interface V1Credentials {
  workspaceId: string;
  publicKey: string;
}

export interface WorkspaceRepo {
  create(input: { name: string; mode: WorkspaceMode }): Promise<Workspace>;
  get(id: string): Promise<Workspace | undefined>;
  count(): Promise<number>;
  setQueuedEvents(id: string, enabled: boolean): Promise<void>;
  setCampaigns(id: string, enabled: boolean): Promise<void>;
}

export interface ApiKeyRepo {
  /** Returns the plain key once (`sk_live_` + 32 hex); only its SHA-256 is stored. */
  create(workspaceId: string): Promise<{ key: string; record: ApiKeyRecord }>;
  /** Looks a presented key up by its hash; undefined when unknown. */
  findByKey(key: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes by plain key or by key id; false when no such key. */
  revoke(keyOrId: string): Promise<boolean>;
  listForWorkspace(workspaceId: string): Promise<ApiKeyRecord[]>;
}

export interface SecretRepo {
  /** Creates the workspace's first webhook secret (`whsec_` + 48 hex) and returns it. */
  createWebhookSecret(workspaceId: string): Promise<string>;
  /** Current and still-overlapping webhook secrets, newest first. */
  webhookSecrets(workspaceId: string): Promise<WebhookSecret[]>;
  /** New secret; the old ones stay valid for `overlapMs`. */
  rotateWebhookSecret(workspaceId: string, overlapMs: number): Promise<string>;
  /** v1 credentials: public key stored plain, private key stored hashed. */
  createV1Credentials(workspaceId: string): Promise<{ publicKey: string; privateKey: string }>;
  verifyV1Credentials(publicKey: string, privateKey: string): Promise<V1Credentials | undefined>;
}

export interface AgentRecord {
  id: string;
  workspaceId: string;
  revision: number;
  /**
   * The agent's settings as the API stores them (every field but id, object, revision and timestamps): parsed
   * JSON of no type until `storedSettings` (core/agents/stored.ts) decodes it.
   */
  content: unknown;
  createdAt: number;
  updatedAt: number;
}

export type RevisionReason = 'create' | 'update' | 'flow' | 'rollback' | 'publish';

export interface AgentRevisionRecord {
  agentId: string;
  revision: number;
  reason: RevisionReason;
  /** For rollbacks: the revision whose content was restored. */
  restoredFrom: number | null;
  /** As `AgentRecord.content`. */
  content: unknown;
  createdAt: number;
}

export interface AgentRepo {
  create(workspaceId: string, content: JsonObject): Promise<AgentRecord>;
  /** Undefined for unknown, deleted, or another workspace's agent. */
  get(workspaceId: string, id: string): Promise<AgentRecord | undefined>;
  /** Newest first; `after` is the id of the last item of the previous page. */
  list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<AgentRecord>>;
  /**
   * Read-modify-write in one transaction: `change` gets the current record and returns the new content
   * (it may throw to refuse; nothing is written then). Raises the revision and stores the new revision row.
   * 'conflict' when `ifRevision` is given and differs from the current revision.
   */
  save(
    workspaceId: string,
    id: string,
    options: {
      reason: RevisionReason;
      ifRevision?: number;
      restoredFrom?: number;
      change: (current: AgentRecord) => JsonObject;
    },
  ): Promise<AgentRecord | 'not_found' | 'conflict'>;
  /** Soft delete; false when not found. */
  softDelete(workspaceId: string, id: string): Promise<boolean>;
  listRevisions(
    workspaceId: string,
    agentId: string,
    options: { limit: number; before?: number },
  ): Promise<Page<AgentRevisionRecord> | undefined>;
  getRevision(
    workspaceId: string,
    agentId: string,
    revision: number,
  ): Promise<AgentRevisionRecord | undefined>;
}

export type LedgerKind =
  | 'topup'
  | 'call'
  | 'flow_generation'
  | 'transcription'
  | 'tts'
  | 'number_rental'
  | 'adjustment';

export interface LedgerEntry {
  id: string;
  workspaceId: string;
  kind: LedgerKind;
  /** Positive for credits, negative for debits. */
  amountPaise: number;
  balanceAfterPaise: number;
  reference: string;
  description: string;
  createdAt: number;
}

export interface WalletBalance {
  balancePaise: number;
  heldPaise: number;
  availablePaise: number;
}

export type HoldStatus = 'held' | 'captured' | 'released';

export interface HoldRecord {
  workspaceId: string;
  reference: string;
  kind: LedgerKind;
  amountPaise: number;
  status: HoldStatus;
  capturedPaise: number;
  createdAt: number;
  settledAt: number | null;
}

export class InsufficientBalanceError extends Error {
  constructor(
    readonly neededPaise: number,
    readonly availablePaise: number,
  ) {
    super(`insufficient balance: need ${neededPaise} paise, ${availablePaise} available`);
    this.name = 'InsufficientBalanceError';
  }
}

/** `capture` named a reference with no hold in the workspace. */
export class UnknownHoldError extends Error {
  constructor(readonly reference: string) {
    super(`no hold with reference ${reference}`);
    this.name = 'UnknownHoldError';
  }
}

/**
 * The wallet: an append-only ledger plus holds. Never negative; every operation is idempotent on its
 * reference and runs in a transaction (joining the caller's when called through `Store.transaction`).
 */
export interface WalletLedger {
  balance(workspaceId: string): Promise<WalletBalance>;
  /** Adds money (top-up, adjustment). Idempotent on (workspace, kind, reference). */
  credit(
    workspaceId: string,
    input: { amountPaise: number; reference: string; kind?: LedgerKind; description?: string },
  ): Promise<LedgerEntry>;
  /** Reserves money for a worst case; throws InsufficientBalanceError when available < amount. Idempotent. */
  hold(
    workspaceId: string,
    input: { reference: string; amountPaise: number; kind: LedgerKind },
  ): Promise<HoldRecord>;
  /**
   * Charges `amountPaise` (at most the held amount) from the hold and releases the rest.
   * Capturing 0 writes no ledger entry. Idempotent: a settled hold is returned as it is.
   * More than the hold is capped at the hold (`capturedPaise` says what was charged), never refused.
   * Throws UnknownHoldError when the workspace has no hold with that reference.
   */
  capture(
    workspaceId: string,
    input: { reference: string; amountPaise: number; description?: string },
  ): Promise<HoldRecord>;
  /** Frees the whole hold without charging. Idempotent. */
  release(workspaceId: string, reference: string): Promise<HoldRecord | undefined>;
  getHold(workspaceId: string, reference: string): Promise<HoldRecord | undefined>;
  /** Charges without a hold; throws InsufficientBalanceError; idempotent on (workspace, kind, reference). */
  debit(
    workspaceId: string,
    input: { amountPaise: number; reference: string; kind: LedgerKind; description?: string },
  ): Promise<LedgerEntry>;
  /** Newest first. */
  transactions(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<LedgerEntry>>;
}

export interface IdempotencyRecord {
  workspaceId: string;
  key: string;
  /** SHA-256 of the request (method, path, body) so a reused key with another body can be told apart. */
  requestHash: string;
  status: 'in_flight' | 'done';
  responseStatus: number | null;
  responseBody: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface IdempotencyRepo {
  /**
   * Claims a key; returns the existing unexpired record instead when there is one. The claim itself expires
   * after `inFlightTtlMs` (default 60 s, capped at `ttlMs`), so a key whose request died with its process can be
   * claimed again by a retry soon after; `complete` extends the record to the whole `ttlMs`.
   */
  begin(input: {
    workspaceId: string;
    key: string;
    requestHash: string;
    ttlMs: number;
    inFlightTtlMs?: number;
  }): Promise<{ claimed: true } | { claimed: false; record: IdempotencyRecord }>;
  /** Stores the response for replay until `ttlMs` after the claim was made. */
  complete(
    workspaceId: string,
    key: string,
    responseStatus: number,
    responseBody: string,
    ttlMs: number,
  ): Promise<void>;
  /** Forget a claim whose request failed before producing a response worth replaying. */
  abandon(workspaceId: string, key: string): Promise<void>;
}

/** Repositories bound to one executor (the pool, or one transaction). */
export interface Repositories {
  readonly workspaces: WorkspaceRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly secrets: SecretRepo;
  readonly agents: AgentRepo;
  readonly wallet: WalletLedger;
  readonly idempotency: IdempotencyRepo;
  readonly calls: CallRepo;
  readonly events: EventRepo;
  readonly toolSecrets: ToolSecretRepo;
  readonly toolRuns: ToolRunRepo;
  readonly dnc: DncRepo;
  readonly campaigns: CampaignRepo;
  readonly phoneNumbers: PhoneNumberRepo;
  readonly phonePools: PhonePoolRepo;
  readonly telephony: TelephonyRepo;
  readonly speech: SpeechRepo;
  readonly flowJobs: FlowJobRepo;
  readonly transcriptions: TranscriptionRepo;
  readonly v1: V1Repo;
}

export interface Store extends Repositories {
  readonly dialect: 'sqlite' | 'postgres';
  /** Runs `fn` in one transaction; the repositories it gets write inside it. Nested calls join the outer one. */
  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
