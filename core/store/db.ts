/**
 * The Kysely table types of the store: the columns exactly as both dialects hold them.
 * Money is integer paise and times are epoch milliseconds, both BIGINT (PostgreSQL's int8 is parsed to a
 * number by the pool; SQLite returns numbers). Booleans are INTEGER 0/1 and JSON documents are TEXT on both
 * dialects, so the two behave alike (see migrations/0001_foundation.ts).
 */
import type {
  CallChannel,
  CallDirection,
  CallStatus,
  EventStatus,
  HoldStatus,
  LedgerKind,
  NumberOwnership,
  NumberState,
  PoolPurpose,
  ReviewStatus,
  RevisionReason,
  StoredHealth,
  WorkspaceMode,
} from './types.ts';

export interface WorkspacesTable {
  id: string;
  name: string;
  mode: WorkspaceMode;
  queued_events_enabled: number;
  /** 0 when the operator turned campaigns (and the do-not-call list) off for the workspace. */
  campaigns_enabled: number;
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
  /** The private key sealed under the deployment key, once a request proved it (signs v1 webhooks). */
  private_key_sealed?: string | null;
}

export interface V1AssistantsTable {
  /** The v2 agent the assistant is. */
  agent_id: string;
  workspace_id: string;
  /** JSON: the v1 document as last written. */
  document: string;
  created_at: number;
  /** When an update through v1 last started (the cooldown counts from it); 0 before the first. */
  updated_at: number;
}

export interface V1IntegrationsTable {
  workspace_id: string;
  integration_id: string;
  /** JSON `{name, tools}`: the integration's v2 tool definitions. */
  document: string;
  created_at: number;
  updated_at: number;
}

export interface V1DocumentsTable {
  id: string;
  workspace_id: string;
  url: string;
  title: string;
  type: string;
  /** The document's text as extracted at upload. */
  text: string;
  created_at: number;
}

export interface V1WorkspaceAccessTable {
  public_key: string;
  workspace_id: string;
  created_at: number;
}

export interface V1CallsTable {
  call_id: string;
  workspace_id: string;
  /** The organization public key whose private key signs the call's v1 webhooks. */
  public_key: string;
  callback_url: string | null;
  /** JSON, echoed on every v1 webhook of the call; null when none was given. */
  metadata: string | null;
  /** JSON object given at initiate. */
  payload: string;
  priority: number;
  /** 1 for a call placed through v1; each retry of `retryProtocol` one more. */
  attempt: number;
  /** The call a retry places again; null for a first attempt. */
  retry_of: string | null;
  /** Epoch ms before which the dialer leaves the call queued; null: at once. */
  not_before: number | null;
  created_at: number;
  updated_at: number;
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

export interface CallsTable {
  id: string;
  workspace_id: string;
  agent_id: string;
  /** The agent revision the call runs (fixed at admission). */
  agent_revision: number;
  channel: CallChannel;
  /** E.164 destination; null for browser calls. */
  to_number: string | null;
  from_number: string | null;
  tier: string;
  /** The rate fixed at admission; settlement bills at it. */
  per_min_paise: number;
  max_duration_secs: number;
  /** JSON text of the call's variables; never put on events. */
  variables: string;
  webhook_url: string | null;
  phone_number_id: string | null;
  pool_id: string | null;
  /** The campaign whose dialler placed the call; null for single calls. */
  campaign_id: string | null;
  direction: CallDirection;
  status: CallStatus;
  ended_reason: string | null;
  carrier: string | null;
  carrier_call_id: string | null;
  /** The gateway node that hosts the call's media (orphan recovery). */
  gateway_node: string | null;
  created_at: number;
  dialing_at: number | null;
  /** When media went live (`started_at` on the API). */
  answered_at: number | null;
  ended_at: number | null;
  duration_secs: number;
  cost_paise: number;
  transcript_available: number;
  recording_available: number;
  /** JSON text of the post-call analysis; null until ready. */
  analysis: string | null;
  /** JSON text of the latency summary; null until a turn was measured. */
  latency: string | null;
  /** What went wrong, for operators (never on the API). */
  error: string | null;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  call_id: string | null;
  type: string;
  created_at: number;
  /** The envelope's exact JSON text, sent byte for byte on every attempt and replay. */
  body: string;
  webhook_url: string | null;
  status: EventStatus;
  attempts: number;
  next_attempt_at: number | null;
  /** HTTP status of the last attempt; null when it got no response. */
  last_status: number | null;
  last_error: string | null;
  delivered_at: number | null;
  /** JSON `{agent_id, revision, tool}` of a post_call tool delivery; null for webhook events. */
  tool_target?: string | null;
  /** Set on a legacy v1 webhook: the organization public key it is signed for (v1's `x-signature`). */
  v1_public_key?: string | null;
}

export interface ToolSecretsTable {
  workspace_id: string;
  name: string;
  /** The AES-256-GCM envelope of the value; the clear value is never stored. */
  sealed: string;
  created_at: number;
  updated_at: number;
}

export interface CallToolRunsTable {
  /** Internal time-ordered row id. */
  id: string;
  workspace_id: string;
  call_id: string;
  name: string;
  phase: string;
  status: string;
  http_status: number | null;
  started_at: number;
  duration_ms: number;
}

export interface PhoneNumbersTable {
  id: string;
  workspace_id: string;
  /** E.164, +91 only. */
  number: string;
  ownership: NumberOwnership;
  provider: string;
  /** The provider's own id of the number (a rental, an imported number's sid). */
  provider_ref: string;
  state: NumberState;
  setup_error: string | null;
  agent_id: string | null;
  incoming_enabled: number;
  pool_id: string | null;
  version: number;
  health: StoredHealth;
  resting_until: number | null;
  /** JSON array of when its automatic rests began (the last day's). */
  rests: string;
  warming_until: number;
  paid_until: number | null;
  renews_at: number | null;
  releases_at: number | null;
  released_at: number | null;
  /** The provider account's credentials of an imported number, sealed; null for managed numbers. */
  provider_secret: string | null;
  /** An imported number's incoming-call address at its provider before ours, restored on delete. */
  previous_voice_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface PhonePoolsTable {
  id: string;
  workspace_id: string;
  name: string;
  purpose: PoolPurpose;
  /** Null: the purpose's starting pace. */
  max_per_hour: number | null;
  default_for_campaigns: number;
  created_at: number;
  updated_at: number;
}

export interface TelephonySubmissionsTable {
  id: string;
  workspace_id: string;
  provider: string;
  provider_ref: string;
  status: ReviewStatus;
  /** JSON array of the reviewer's reasons. */
  reasons: string;
  /** JSON text of the documents as submitted. */
  content: string;
  created_at: number;
  updated_at: number;
  reviewed_at: number | null;
}

export interface TelephonyQuotesTable {
  id: string;
  workspace_id: string;
  number: string;
  amount_paise: number;
  period_months: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface DncEntriesTable {
  workspace_id: string;
  /** E.164. */
  number: string;
  reason: string | null;
  /** `api` or `opt_out`. */
  source: string;
  /** The call on which the caller opted out; null for numbers listed through the API. */
  call_id: string | null;
  created_at: number;
}

export interface CampaignsTable {
  id: string;
  workspace_id: string;
  /** JSON of the campaign's settings (see core/campaigns/settings.ts). */
  settings: string;
  status: string;
  pause_reason: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface CampaignContactsTable {
  id: string;
  campaign_id: string;
  workspace_id: string;
  to_number: string;
  /** JSON map of the contact's call variables. */
  variables: string;
  status: string;
  attempts: number;
  /** JSON array of the contact's call ids, oldest first. */
  call_ids: string;
  next_attempt_at: number | null;
  /** The CSV upload that wrote the row; null once it is committed, and for JSON additions. */
  upload_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface SpeechRequestsTable {
  id: string;
  workspace_id: string;
  voice_id: string;
  /** `wav`, `pcm16` or `mulaw`. */
  format: string;
  sample_rate: number;
  characters: number;
  audio_ms: number;
  cost_paise: number;
  created_at: number;
}

export interface FlowJobsTable {
  id: string;
  workspace_id: string;
  /** `refine` (a flow test) or `generate` (a flow draft). */
  kind: string;
  agent_id: string | null;
  status: string;
  /** JSON: the request as sent. */
  input: string;
  /** JSON: the job's state, rewritten after every step. */
  state: string;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface TranscriptionsTable {
  id: string;
  workspace_id: string;
  /** `queued`, `running`, `completed`, `degraded` or `failed`. */
  status: string;
  language_code: string;
  /** `upload` (the audio is a file under DATA_DIR) or `url` (the worker fetches `audio_url`). */
  source: string;
  audio_url: string | null;
  media_type: string | null;
  audio_bytes: number;
  duration_ms: number | null;
  channels: number | null;
  /** JSON: the segments, once the job ended. */
  segments: string | null;
  /** How speakers were told apart: `channels`, `voice_clusters` or `none`. */
  speakers_method: string | null;
  failure: string | null;
  cost_paise: number;
  attempts: number;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  webhook_secrets: WebhookSecretsTable;
  v1_credentials: V1CredentialsTable;
  v1_assistants: V1AssistantsTable;
  v1_calls: V1CallsTable;
  v1_workspace_access: V1WorkspaceAccessTable;
  v1_integrations: V1IntegrationsTable;
  v1_documents: V1DocumentsTable;
  agents: AgentsTable;
  agent_revisions: AgentRevisionsTable;
  wallet_accounts: WalletAccountsTable;
  wallet_ledger: WalletLedgerTable;
  wallet_holds: WalletHoldsTable;
  idempotency_keys: IdempotencyKeysTable;
  calls: CallsTable;
  events: EventsTable;
  tool_secrets: ToolSecretsTable;
  call_tool_runs: CallToolRunsTable;
  dnc_entries: DncEntriesTable;
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  phone_numbers: PhoneNumbersTable;
  phone_pools: PhonePoolsTable;
  telephony_submissions: TelephonySubmissionsTable;
  telephony_quotes: TelephonyQuotesTable;
  speech_requests: SpeechRequestsTable;
  flow_jobs: FlowJobsTable;
  transcriptions: TranscriptionsTable;
}
