import { storedSettings } from '../agents/stored.ts';
import type { Tier } from '../billing/prices.ts';
import { admitWithin, DEFAULT_TIER } from '../calls/admission.ts';
import type { CallLifecycle } from '../calls/lifecycle.ts';
import { CALL_LIMITS, VARIABLE_NAME } from '../calls/variables.ts';
import { type Clock, systemClock } from '../clock.ts';
import { ApiError, invalid, notFound } from '../errors.ts';
import { isId } from '../ids.ts';
import {
  type CallChannel,
  type CallRecord,
  type CallVariables,
  InsufficientBalanceError,
  type JsonObject,
  type Store,
} from '../store/types.ts';
import type { V1CallRecord } from '../store/v1-types.ts';
import type { V1CallEvents } from './webhooks.ts';

export interface V1CallInput {
  workspaceId: string;
  publicKey: string;
  assistantId: string;
  channel: CallChannel;
  phoneNumber: string | null;
  callbackUrl: string | null;
  payload: JsonObject;
  metadata: unknown;
  priority: number;
}

/**
 * A v1 call's `payload` as the v2 call's variables: its top-level values fill the assistant's prompt
 * (`{{customerName}}`); nested values are given as their JSON text. Keys that cannot be variable names are
 * refused, like values longer than a variable may be.
 */
export function variablesOf(payload: JsonObject): CallVariables {
  const variables: CallVariables = {};
  const entries = Object.entries(payload);
  if (entries.length > CALL_LIMITS.variables)
    throw invalid('payload', `at most ${CALL_LIMITS.variables} keys`);
  for (const [key, value] of entries) {
    if (!VARIABLE_NAME.test(key))
      throw invalid(`payload.${key.slice(0, 64)}`, 'is not a valid key (letters, digits, _)');
    const scalar =
      value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? value
        : JSON.stringify(value);
    if (typeof scalar === 'string' && scalar.length > CALL_LIMITS.variableValueChars) {
      throw invalid(`payload.${key}`, `must be at most ${CALL_LIMITS.variableValueChars} characters`);
    }
    variables[key] = scalar;
  }
  return variables;
}

/**
 * v1 calls are v2 calls: the same admission (agent, wallet hold, queue depth), dialer, live-call ceiling and
 * settlement; what v1 adds (callback URL, metadata, payload, priority, the signing key) is kept beside the call
 * and its v1 webhooks are written in the same transactions as the call's changes.
 */
export class V1Calls {
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly events: V1CallEvents,
    private readonly lifecycle: CallLifecycle,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  async initiate(input: V1CallInput): Promise<{ call: CallRecord; deliverable: boolean }> {
    const agent = isId('agent', input.assistantId)
      ? await this.store.agents.get(input.workspaceId, input.assistantId)
      : undefined;
    if (!agent) throw notFound(`assistant ${input.assistantId}`);
    if (storedSettings(agent.content).archived) {
      throw invalid('assistant', `assistant ${input.assistantId} is archived; it places no calls`);
    }
    const variables = variablesOf(input.payload);
    try {
      return await this.store.transaction(async (repos) => {
        const { call } = await admitWithin(
          repos,
          {
            workspaceId: input.workspaceId,
            agentId: input.assistantId,
            channel: input.channel,
            to: input.phoneNumber,
            variables,
            // v1 webhooks go to callbackUrl; the v2 events of the call are kept, not delivered.
            webhookUrl: null,
          },
          DEFAULT_TIER as Tier,
        );
        await repos.v1.insertCall({
          callId: call.id,
          workspaceId: input.workspaceId,
          publicKey: input.publicKey,
          callbackUrl: input.callbackUrl,
          metadata: input.metadata,
          payload: input.payload,
          priority: input.priority,
        });
        const rows = await this.events.eventsFor(repos, call, 'initiated', this.clock.now());
        for (const row of rows) await repos.events.append(row);
        return { call, deliverable: rows.length > 0 };
      });
    } catch (error) {
      if (error instanceof InsufficientBalanceError) {
        throw new ApiError('insufficient_balance', 'the wallet cannot cover this call; top up and retry');
      }
      throw error;
    }
  }

  /** What a queued call carries: payload (its variables), metadata, callbackUrl, priority. */
  async update(
    workspaceId: string,
    callId: string,
    change: { payload?: JsonObject; metadata?: unknown; callbackUrl?: string | null; priority?: number },
  ): Promise<{ call: CallRecord; v1: V1CallRecord; deliverable: boolean }> {
    const call = await this.v1CallOf(workspaceId, callId);
    return this.store.transaction(async (repos) => {
      const updated = await repos.calls.transition(workspaceId, call.id, {
        from: ['queued'],
        to: 'queued',
        ...(change.payload ? { set: { variables: variablesOf(change.payload) } } : {}),
      });
      if (!updated)
        throw invalid(
          'callId',
          `the call is no longer queued (it is ${call.status}); only a queued call can be updated`,
        );
      const v1 = await repos.v1.updateCall(workspaceId, callId, change);
      if (!v1) throw notFound(`call ${callId}`);
      const rows = await this.events.eventsFor(repos, updated, 'updated', this.clock.now());
      for (const row of rows) await repos.events.append(row);
      return { call: updated, v1, deliverable: rows.length > 0 };
    });
  }

  /** Ends the call `aborted` (never billed); the caller tells its gateway to hang up when `hangUp`. */
  async abort(workspaceId: string, callId: string): Promise<{ call: CallRecord; hangUp: boolean }> {
    await this.v1CallOf(workspaceId, callId);
    return this.lifecycle.abort(workspaceId, callId);
  }

  async get(workspaceId: string, callId: string): Promise<CallRecord> {
    return this.v1CallOf(workspaceId, callId);
  }

  /** A call of the workspace; v1 addresses every call of the workspace, also those placed in v2. */
  private async v1CallOf(workspaceId: string, callId: string): Promise<CallRecord> {
    const call = isId('call', callId) ? await this.store.calls.get(workspaceId, callId) : undefined;
    if (!call) throw notFound(`call ${callId}`);
    return call;
  }
}
