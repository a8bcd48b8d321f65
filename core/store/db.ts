/**
 * The Kysely table types of the store: the columns exactly as both dialects hold them.
 * Money is integer paise and times are epoch milliseconds, both BIGINT (PostgreSQL's int8 is parsed to a
 * number by the pool; SQLite returns numbers). Booleans are INTEGER 0/1 and JSON documents are TEXT on both
 * dialects, so the two behave alike (see migrations/0001_foundation.ts).
 */
import type { HoldStatus, LedgerKind, RevisionReason, WorkspaceMode } from './types.ts';

export interface WorkspacesTable {
  id: string;
  name: string;
  mode: WorkspaceMode;
  queued_events_enabled: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  /** SHA-256 of the whole key, lowercase hex; unique. */
  key_hash: string;
  prefix: string;
  revoked_at: number | null;
  created_at: number;
}

export interface WebhookSecretsTable {
  /** Internal row id (time-ordered), used only to order secrets created in the same millisecond. */
  id: string;
  workspace_id: string;
  /** Kept in clear: the dispatcher signs with it. */
  secret: string;
  created_at: number;
  expires_at: number | null;
}

export interface V1CredentialsTable {
  public_key: string;
  workspace_id: string;
  /** SHA-256 of the private key, lowercase hex. */
  private_key_hash: string;
  created_at: number;
}

export interface AgentsTable {
  id: string;
  workspace_id: string;
  /** The head revision. */
  revision: number;
  /** JSON text of the agent's settings. */
  content: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface AgentRevisionsTable {
  workspace_id: string;
  agent_id: string;
  revision: number;
  reason: RevisionReason;
  restored_from: number | null;
  content: string;
  created_at: number;
}

export interface WalletAccountsTable {
  workspace_id: string;
  balance_paise: number;
  held_paise: number;
  updated_at: number;
}

export interface WalletLedgerTable {
  id: string;
  workspace_id: string;
  kind: LedgerKind;
  amount_paise: number;
  balance_after_paise: number;
  reference: string;
  description: string;
  created_at: number;
}

export interface WalletHoldsTable {
  workspace_id: string;
  reference: string;
  kind: LedgerKind;
  amount_paise: number;
  status: HoldStatus;
  captured_paise: number;
  created_at: number;
  settled_at: number | null;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  key: string;
  request_hash: string;
  status: 'in_flight' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  webhook_secrets: WebhookSecretsTable;
  v1_credentials: V1CredentialsTable;
  agents: AgentsTable;
  agent_revisions: AgentRevisionsTable;
  wallet_accounts: WalletAccountsTable;
  wallet_ledger: WalletLedgerTable;
  wallet_holds: WalletHoldsTable;
  idempotency_keys: IdempotencyKeysTable;
}
