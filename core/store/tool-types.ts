import type { CallVariables } from './call-types.ts';
import type { Page } from './values.ts';

/** A tool secret as stored: the value only as its sealed (encrypted) envelope. */
export interface ToolSecretRecord {
  workspaceId: string;
  name: string;
  sealed: string;
  createdAt: number;
  updatedAt: number;
}

export interface ToolSecretRepo {
  /** Inserts a new secret; `exists` when the name is taken, `full` when the workspace holds `max` already. */
  create(
    workspaceId: string,
    name: string,
    sealed: string,
    max: number,
  ): Promise<ToolSecretRecord | 'exists' | 'full'>;
  get(workspaceId: string, name: string): Promise<ToolSecretRecord | undefined>;
  /** Secrets in name order, after `after` (a name). */
  list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<ToolSecretRecord>>;
  /** Every name of the workspace (at most the per-workspace limit). */
  names(workspaceId: string): Promise<string[]>;
  /** The named secrets that exist (others are left out). */
  many(workspaceId: string, names: readonly string[]): Promise<ToolSecretRecord[]>;
  replace(workspaceId: string, name: string, sealed: string): Promise<ToolSecretRecord | undefined>;
  remove(workspaceId: string, name: string): Promise<boolean>;
}

export const TOOL_RUN_STATUSES = ['succeeded', 'failed', 'timeout', 'skipped'] as const;
export type ToolRunStatus = (typeof TOOL_RUN_STATUSES)[number];

/** One run of a tool on a call, as `tool_calls` shows it: no bodies, no secret values. */
export interface ToolRunRecord {
  name: string;
  phase: string;
  status: ToolRunStatus;
  httpStatus: number | null;
  startedAt: number;
  durationMs: number;
}

export interface ToolRunRepo {
  record(workspaceId: string, callId: string, run: ToolRunRecord): Promise<void>;
  /** The call's runs in the order they started. */
  forCall(workspaceId: string, callId: string): Promise<ToolRunRecord[]>;
  /** Replaces a call's variables (what its pre_call tools returned, merged by the caller). */
  setCallVariables(workspaceId: string, callId: string, variables: CallVariables): Promise<void>;
}
