import type { JsonObject } from './values.ts';

/** What only a v1 assistant has, beside the v2 agent it is (same id). */
export interface V1AssistantRecord {
  agentId: string;
  workspaceId: string;
  /** The v1 document as last written: parsed JSON of no type until core/v1/assistant.ts decodes it. */
  document: unknown;
  createdAt: number;
  /** When an update through v1 last started; 0 before the first. */
  updatedAt: number;
}

/** What a call placed through v1 carries besides the v2 call (same id). */
export interface V1CallRecord {
  callId: string;
  workspaceId: string;
  publicKey: string;
  callbackUrl: string | null;
  /** Parsed JSON echoed on the call's v1 webhooks; null when none was given. */
  metadata: unknown;
  payload: JsonObject;
  priority: number;
  /** 1 for the call placed through v1; each retry of the assistant's `retryProtocol` one more. */
  attempt: number;
  /** The call this one places again; null for a first attempt. */
  retryOf: string | null;
  /** Epoch ms before which the call is not dialled; null: at once. */
  notBefore: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A v1 call to insert; a first attempt unless it says otherwise. */
export type NewV1Call = Omit<V1CallRecord, 'createdAt' | 'updatedAt' | 'attempt' | 'retryOf' | 'notBefore'> &
  Partial<Pick<V1CallRecord, 'attempt' | 'retryOf' | 'notBefore'>>;

/** A v1 tool integration: its document is parsed JSON of no type until core/v1/integrations.ts decodes it. */
export interface V1IntegrationRecord {
  workspaceId: string;
  integrationId: string;
  document: unknown;
  createdAt: number;
  updatedAt: number;
}

/** A knowledge-base document fetched at upload. */
export interface V1DocumentRecord {
  id: string;
  workspaceId: string;
  url: string;
  title: string;
  type: string;
  text: string;
  createdAt: number;
}

export interface V1CallChange {
  callbackUrl?: string | null;
  metadata?: unknown;
  payload?: JsonObject;
  priority?: number;
}

export interface V1Repo {
  assistant(workspaceId: string, agentId: string): Promise<V1AssistantRecord | undefined>;
  /** The v1 documents of these agents of the workspace (those that have one). */
  assistants(workspaceId: string, agentIds: readonly string[]): Promise<V1AssistantRecord[]>;
  /** Writes the assistant's document (a new one, or over the old one). */
  putAssistant(input: { workspaceId: string; agentId: string; document: JsonObject }): Promise<void>;
  /**
   * Claims an update of the assistant: true, and `updated_at` moves to now, when its last update is at least
   * `cooldownMs` old (or it has no document yet); false inside the cooldown. One conditional UPDATE, so two
   * overlapping updates cannot both pass.
   */
  claimUpdate(workspaceId: string, agentId: string, cooldownMs: number): Promise<boolean>;
  insertCall(record: NewV1Call): Promise<V1CallRecord>;
  call(workspaceId: string, callId: string): Promise<V1CallRecord | undefined>;
  /** Calls placed through v1 with this assistant that are live (dialing or in progress). */
  countLiveCalls(workspaceId: string, agentId: string): Promise<number>;
  updateCall(workspaceId: string, callId: string, change: V1CallChange): Promise<V1CallRecord | undefined>;
  /** Writes an integration (a new one, or over the one of that id). */
  putIntegration(
    workspaceId: string,
    integrationId: string,
    document: JsonObject,
  ): Promise<V1IntegrationRecord>;
  integration(workspaceId: string, integrationId: string): Promise<V1IntegrationRecord | undefined>;
  /** The workspace's integrations by id (at most `limit`). */
  integrations(workspaceId: string, limit: number): Promise<V1IntegrationRecord[]>;
  /** Writes a document (over the workspace's document of the same URL). */
  putDocument(record: Omit<V1DocumentRecord, 'id' | 'createdAt'>): Promise<V1DocumentRecord>;
  /** The workspace's documents, newest first (at most `limit`); `urls` narrows to those URLs. */
  documents(
    workspaceId: string,
    options: { limit: number; urls?: readonly string[] },
  ): Promise<V1DocumentRecord[]>;
  /** Lets the organization address a workspace besides its own (one it onboarded). */
  grantAccess(publicKey: string, workspaceId: string): Promise<void>;
  hasAccess(publicKey: string, workspaceId: string): Promise<boolean>;
  /** How many workspaces the organization was granted. */
  countAccess(publicKey: string): Promise<number>;
  /** The organization's private key as sealed by the first request that proved it. */
  sealedPrivateKey(publicKey: string): Promise<{ workspaceId: string; sealed: string } | undefined>;
  /** Stores the sealed private key once; a key already sealed stays as it is. */
  sealPrivateKey(publicKey: string, sealed: string): Promise<void>;
}
