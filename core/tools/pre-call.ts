import type { Logger } from 'pino';
import { storedTools } from '../agents/stored.ts';
import type { ToolDefinition } from '../agents/types.ts';
import { VARIABLE_NAME } from '../calls/variables.ts';
import type { CallRecord, CallVariables, Store } from '../store/types.ts';
import type { ToolRunner, ToolRunOutcome } from './runner.ts';

/** The limits of call variables (interface "Limits"), which pre_call results keep to as well. */
const MAX_VARIABLES = 32;
const MAX_VALUE_CHARS = 512;
const MAX_REASON_CHARS = 200;

export interface PreCallResult {
  /** Set when a tool asked to skip the call: its reason (or a default). */
  skipReason?: string;
}

/** The tools of a call's agent revision, as saved (they passed validation then). */
export async function toolsOfCall(store: Store, call: CallRecord): Promise<ToolDefinition[]> {
  const revision = await store.agents.getRevision(call.workspaceId, call.agentId, call.agentRevision);
  return storedTools(revision);
}

/**
 * Runs a call's pre_call tools when the dialer takes it, in definition order. A 2xx JSON answer may add
 * `variables` (merged into the call's, within the call-variable limits) and may ask to `skip` the call. A tool
 * that fails or is slow does not block the call: it is recorded and the call is dialled without its variables.
 */
export class PreCallTools {
  constructor(private readonly deps: { store: Store; runner: ToolRunner; logger?: Logger }) {}

  async prepare(call: CallRecord): Promise<PreCallResult> {
    const tools = (await toolsOfCall(this.deps.store, call)).filter((t) => t.phase === 'pre_call');
    if (tools.length === 0) return {};
    const variables: CallVariables = { ...call.variables };
    let skipReason: string | undefined;
    for (const tool of tools) {
      if (skipReason !== undefined) {
        await this.record(call, {
          name: tool.name,
          phase: 'pre_call',
          status: 'skipped',
          httpStatus: null,
          startedAt: Date.now(),
          durationMs: 0,
        });
        continue;
      }
      const outcome = await this.deps.runner.run(tool, {
        workspaceId: call.workspaceId,
        callId: call.id,
        agentId: call.agentId,
        to: call.toNumber ?? '',
        variables,
      });
      await this.record(call, outcome);
      if (outcome.status !== 'succeeded') {
        this.deps.logger?.warn(
          {
            call_id: call.id,
            tool: tool.name,
            status: outcome.status,
            http_status: outcome.httpStatus,
            error: outcome.error,
          },
          'pre_call tool did not succeed; dialling without its variables',
        );
        continue;
      }
      const answer = outcome.response;
      if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) continue;
      const {
        variables: added,
        skip,
        reason,
      } = answer as { variables?: unknown; skip?: unknown; reason?: unknown };
      mergeVariables(variables, added);
      if (skip === true) {
        skipReason =
          typeof reason === 'string' && reason.trim() ? reason.slice(0, MAX_REASON_CHARS) : 'no reason given';
      }
    }
    if (skipReason === undefined && JSON.stringify(variables) !== JSON.stringify(call.variables)) {
      await this.deps.store.toolRuns.setCallVariables(call.workspaceId, call.id, variables);
    }
    return skipReason === undefined ? {} : { skipReason };
  }

  private record(call: CallRecord, outcome: Omit<ToolRunOutcome, 'response' | 'error'>): Promise<void> {
    return this.deps.store.toolRuns.record(call.workspaceId, call.id, {
      name: outcome.name,
      phase: outcome.phase,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
    });
  }
}

/** Adds the valid entries of `added` (flat names to strings, numbers, booleans) while within the limits. */
function mergeVariables(into: CallVariables, added: unknown): void {
  if (added === null || typeof added !== 'object' || Array.isArray(added)) return;
  for (const [name, value] of Object.entries(added)) {
    if (!VARIABLE_NAME.test(name)) continue;
    if (!(name in into) && Object.keys(into).length >= MAX_VARIABLES) continue;
    if (typeof value === 'string') into[name] = value.slice(0, MAX_VALUE_CHARS);
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) into[name] = value;
  }
}
