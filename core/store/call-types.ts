/**
 * Calls and the outbox of webhook events as the store holds them (re-exported by types.ts).
 * Times are epoch milliseconds; money is integer paise.
 */
import type { CallLatency } from './call-latency.ts';
import type { JsonObject, Page } from './values.ts';

/** The ten call statuses of the interface ("Call status"). */
export const CALL_STATUSES = [
  'queued',
  'dialing',
  'in_progress',
  'completed',
  'voicemail',
  'no_answer',
  'busy',
  'failed',
  'timeout',
  'aborted',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
/** Accepted and not yet ended: what the queue depth counts. */
export const OPEN_CALL_STATUSES = [
  'queued',
  'dialing',
  'in_progress',
] as const satisfies readonly CallStatus[];
/** Occupying a line: what the concurrency ceiling and orphan recovery look at. */
export const LIVE_CALL_STATUSES = ['dialing', 'in_progress'] as const satisfies readonly CallStatus[];

export type CallChannel = 'phone' | 'web';
/** `outbound`: the platform rang the callee; `inbound`: a caller rang one of the workspace's numbers. */
export type CallDirection = 'outbound' | 'inbound';
/** A call's variables: a flat map substituted into the prompt; never echoed on events. */
export type CallVariables = Record<string, string | number | boolean | null>;

export interface CallRecord {
  id: string;
  workspaceId: string;
  agentId: string;
  agentRevision: number;
  channel: CallChannel;
  toNumber: string | null;
  fromNumber: string | null;
  tier: string;
  perMinPaise: number;
  maxDurationSecs: number;
  variables: CallVariables;
  webhookUrl: string | null;
  phoneNumberId: string | null;
  poolId: string | null;
  campaignId: string | null;
  direction: CallDirection;
  status: CallStatus;
  endedReason: string | null;
  carrier: string | null;
  carrierCallId: string | null;
  gatewayNode: string | null;
  createdAt: number;
  dialingAt: number | null;
  /** Media went live. */
  answeredAt: number | null;
  endedAt: number | null;
  durationSecs: number;
  costPaise: number;
  transcriptAvailable: boolean;
  recordingAvailable: boolean;
  analysis: JsonObject | null;
  latency: CallLatency | null;
  error: string | null;
}

/** What admission inserts; the call starts `queued`. The id is chosen first (the wallet hold names it). */
export interface NewCall {
  id: string;
  workspaceId: string;
  agentId: string;
  agentRevision: number;
  channel: CallChannel;
  toNumber: string | null;
  fromNumber?: string | null;
  tier: string;
  perMinPaise: number;
  maxDurationSecs: number;
  variables: CallVariables;
  webhookUrl: string | null;
  phoneNumberId?: string | null;
  poolId?: string | null;
  campaignId?: string | null;
  /** Default `outbound`. */
  direction?: CallDirection;
}

/** Columns a transition may set along with the status. */
export interface CallChanges {
  fromNumber?: string;
  carrier?: string;
  carrierCallId?: string;
  gatewayNode?: string;
  dialingAt?: number;
  answeredAt?: number;
  endedAt?: number;
  endedReason?: string;
  durationSecs?: number;
  costPaise?: number;
  error?: string;
  /** Only while queued: what the call's prompt is filled with (a legacy v1 call update). */
  variables?: CallVariables;
}

export interface CallListFilter {
  limit: number;
  /** Id of the last call of the previous page. */
  after?: string;
  status?: CallStatus | readonly CallStatus[];
  agentId?: string;
  campaignId?: string;
  /** Inclusive lower bound of `createdAt`. */
  createdFrom?: number;
  /** Exclusive upper bound of `createdAt`. */
  createdTo?: number;
}

export interface CallRepo {
  /** Inserts a `queued` call. */
  insert(call: NewCall): Promise<CallRecord>;
  /** Undefined for unknown ids and another workspace's calls. */
  get(workspaceId: string, id: string): Promise<CallRecord | undefined>;
  /**
   * By id alone, across workspaces: only for a caller that holds proof of the call (the gateway, with a
   * verified stream token naming it). Everything a tenant asks goes through `get`.
   */
  findById(id: string): Promise<CallRecord | undefined>;
  /**
   * Inside a transaction: reads the call and locks its row (PostgreSQL) until commit, so what the caller
   * computes from it (durations, cost) stays true when it writes. SQLite transactions hold the write lock.
   */
  getForUpdate(workspaceId: string, id: string): Promise<CallRecord | undefined>;
  /** Newest first. */
  list(workspaceId: string, filter: CallListFilter): Promise<Page<CallRecord>>;
  /** Calls accepted and not yet ended (queued, dialing, in progress). */
  countOpen(workspaceId: string): Promise<number>;
  /** Calls in `dialing` or `in_progress`. */
  countLive(workspaceId: string): Promise<number>;
  /** Calls in `dialing` or `in_progress` across every workspace: what the media gateways carry or soon will. */
  countLiveAll(): Promise<number>;
  /**
   * The oldest queued outbound calls first (FIFO), a legacy v1 call's `priority` before that (higher first);
   * incoming calls never wait in the queue.
   */
  nextQueued(workspaceId: string, limit: number): Promise<CallRecord[]>;
  workspacesWithQueued(): Promise<string[]>;
  /**
   * One conditional UPDATE: moves the call to `to` (with `set`) only when its status is one of `from`.
   * Returns the updated call, or undefined when it was not in an allowed state (it lost a race) or is unknown.
   */
  transition(
    workspaceId: string,
    id: string,
    change: { from: readonly CallStatus[]; to: CallStatus; set?: CallChanges },
  ): Promise<CallRecord | undefined>;
  /** The workspace's call that a carrier knows by `carrierCallId` (Twilio's CallSid), if any. */
  findByCarrierCall(workspaceId: string, carrierCallId: string): Promise<CallRecord | undefined>;
  /** Live calls hosted by `gatewayNode`, across workspaces. */
  liveOnNode(gatewayNode: string): Promise<CallRecord[]>;
  /** Live calls that started dialing at least `ageMs` ago, across workspaces. */
  liveOlderThan(ageMs: number): Promise<CallRecord[]>;
  /** Records the carrier's id of a call once originated; false when the call is unknown or has ended. */
  setCarrierCall(
    workspaceId: string,
    id: string,
    carrier: { carrier: string; carrierCallId: string },
  ): Promise<boolean>;
  setArtifacts(
    workspaceId: string,
    id: string,
    artifacts: { transcriptAvailable?: boolean; recordingAvailable?: boolean },
  ): Promise<boolean>;
  setAnalysis(workspaceId: string, id: string, analysis: JsonObject): Promise<boolean>;
  setLatency(workspaceId: string, id: string, latency: CallLatency): Promise<boolean>;
}

/** `none`: nothing to deliver (the call has no webhook URL); the event is kept as a record. */
export type EventStatus = 'pending' | 'delivered' | 'dead' | 'none';

export interface EventRecord {
  id: string;
  workspaceId: string;
  callId: string | null;
  type: string;
  createdAt: number;
  /** The envelope's exact JSON text. */
  body: string;
  webhookUrl: string | null;
  status: EventStatus;
  /** Scheduled attempts made (replays are not counted). */
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  /** Set on a post_call tool delivery: which tool to render the target of (see core/tools/post-call.ts). */
  toolTarget: string | null;
  /** Set on a legacy v1 webhook: the organization public key that signs it (`x-signature`). */
  v1PublicKey: string | null;
}

export interface NewEvent {
  id: string;
  workspaceId: string;
  callId: string | null;
  type: string;
  createdAt: number;
  body: string;
  webhookUrl: string | null;
  toolTarget?: string;
  v1PublicKey?: string;
}

/** How one attempt went: delivered, or failed with the time of the next attempt (null: dead letter). */
export type AttemptOutcome =
  | { delivered: true; status: number }
  | { delivered: false; status: number | null; error: string; retryAt: number | null };

export interface EventRepo {
  /** Writes the event with the state change (join the transaction); `pending` and due now when it has a URL. */
  append(event: NewEvent): Promise<EventRecord>;
  /** By id alone: for the operator and the dispatcher, which work across workspaces. */
  get(id: string): Promise<EventRecord | undefined>;
  /** A call's events, oldest first. */
  listForCall(workspaceId: string, callId: string): Promise<EventRecord[]>;
  /** Pending events due at `now`, the longest-waiting first. */
  due(now: number, limit: number): Promise<EventRecord[]>;
  /** When the next pending event falls due; undefined when none is pending. */
  nextDueAt(): Promise<number | undefined>;
  /**
   * Records scheduled attempt number `attempt` (1-based). Conditional on the event still being pending after
   * `attempt - 1` attempts, so an attempt is recorded once even when two dispatchers overlap; false otherwise.
   */
  recordAttempt(id: string, attempt: number, outcome: AttemptOutcome): Promise<boolean>;
  /** Records a replay: a success marks the event delivered; a failure only notes the result. */
  recordReplay(
    id: string,
    outcome: { delivered: boolean; status: number | null; error: string | null },
  ): Promise<void>;
  /** Dead-lettered events, newest first, optionally of one workspace. */
  listDead(options: { workspaceId?: string; limit: number; after?: string }): Promise<Page<EventRecord>>;
}
