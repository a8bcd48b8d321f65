import type { JsonObject } from './values.ts';

export const FLOW_JOB_STATUSES = ['running', 'succeeded', 'failed', 'canceled'] as const;
export type FlowJobStatus = (typeof FLOW_JOB_STATUSES)[number];

export const FLOW_JOB_KINDS = ['refine', 'generate'] as const;
export type FlowJobKind = (typeof FLOW_JOB_KINDS)[number];

export interface FlowJobRecord {
  id: string;
  workspaceId: string;
  kind: FlowJobKind;
  agentId: string | null;
  status: FlowJobStatus;
  /** The request as sent: JSON of no type until the flow job decoder reads it. */
  input: unknown;
  /** The job's state: JSON of no type until the flow job decoder reads it. */
  state: unknown;
  leaseOwner: string | null;
  leaseUntil: number | null;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

export interface FlowJobRepo {
  /**
   * Inserts a running job unless the workspace already started `perWindow` jobs of its kind in the last
   * `windowMs`: then nothing is written and the answer says when the oldest of them leaves the window.
   */
  create(
    job: {
      id: string;
      workspaceId: string;
      kind: FlowJobKind;
      agentId: string | null;
      input: JsonObject;
      state: JsonObject;
    },
    limit?: { perWindow: number; windowMs: number },
  ): Promise<{ job: FlowJobRecord } | { retryAfterMs: number }>;
  /** A job of the workspace started at or after `since`. */
  get(workspaceId: string, id: string, since: number): Promise<FlowJobRecord | undefined>;
  /** The newest flow test started with the agent at or after `since`. */
  latestForAgent(workspaceId: string, agentId: string, since: number): Promise<FlowJobRecord | undefined>;
  /** Running jobs nobody holds (never claimed, or the claim lapsed), oldest first. */
  claimable(limit: number): Promise<string[]>;
  /** Takes a running job whose claim lapsed; undefined when another worker has it or it ended. */
  claim(id: string, owner: string, leaseMs: number): Promise<FlowJobRecord | undefined>;
  /** Writes a running job's state (and extends the claim) while `owner` holds it; false otherwise. */
  saveState(id: string, owner: string, state: JsonObject, leaseMs: number): Promise<boolean>;
  /** Extends the claim while `owner` holds it and the job runs; false otherwise. */
  renew(id: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Gives a running job's claim up so another worker takes it at once. */
  release(id: string, owner: string): Promise<void>;
  /**
   * Ends a running job (held by `owner`, or by anyone when null) with its final state; false when it had ended
   * already or another worker holds it. Runs in the caller's transaction, beside the charge.
   */
  finish(
    id: string,
    owner: string | null,
    status: Exclude<FlowJobStatus, 'running'>,
    state: JsonObject,
  ): Promise<boolean>;
  /** Deletes jobs started before `before`; returns how many. */
  deleteStartedBefore(before: number): Promise<number>;
}
