import type { FunctionSpec } from '../../engines/llm/types.ts';
import type { AgentSettings, ToolDefinition } from '../agents/types.ts';
import { type Clock, systemClock } from '../clock.ts';
import { TOOL_LIMITS } from './definition.ts';
import { argumentProblems } from './json-schema.ts';
import type { ToolCallContext, ToolRunner, ToolRunOutcome } from './runner.ts';

/**
 * The most of a tool's answer the model reads (JSON text). A customer's API may answer up to 1 MB; the model
 * needs the facts, and every character is paid for again on each later turn of the call.
 */
export const TOOL_RESULT_CHARS = 8_000;

/** An agent's on_call tools, as saved (they passed validation then). */
export function onCallToolsOf(agent: Pick<AgentSettings, 'tools'>): ToolDefinition[] {
  return (agent.tools as unknown as ToolDefinition[]).filter((t) => t.phase === 'on_call');
}

/** How long a tool may run before the agent says a filler line; 0: never (tools saved before the setting: 1 s). */
export const fillerAfterMs = (tool: ToolDefinition): number =>
  tool.filler_after_ms ?? TOOL_LIMITS.defaultFillerAfterMs;

/** The function the model is offered for a tool. */
export function toolFunction(tool: ToolDefinition): FunctionSpec {
  return {
    name: tool.name,
    description: tool.description ?? '',
    parameters: tool.parameters ?? { type: 'object', properties: {} },
  };
}

/** The longest arguments (JSON text) a run is made with; a model writing more is refused. */
export const MAX_ARGUMENTS_CHARS = 16_384;

export type CheckedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

/** The model's arguments (JSON text) parsed and checked against the tool's `parameters`. */
export function checkArguments(tool: ToolDefinition, json: string): CheckedArguments {
  if (json.length > MAX_ARGUMENTS_CHARS)
    return { ok: false, error: `invalid arguments: more than ${MAX_ARGUMENTS_CHARS} characters` };
  let args: unknown;
  try {
    args = JSON.parse(json.trim() === '' ? '{}' : json);
  } catch {
    return { ok: false, error: 'invalid arguments: not JSON' };
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args))
    return { ok: false, error: 'invalid arguments: must be a JSON object' };
  const problems = argumentProblems(tool.parameters ?? { type: 'object' }, args);
  if (problems.length > 0) return { ok: false, error: `invalid arguments: ${problems.join('; ')}` };
  return { ok: true, args: args as Record<string, unknown> };
}

/**
 * What the model reads as the tool's result: `{ok: true, status, result}` with the answer (JSON, or text), or
 * `{ok: false, error}` (plus `status` and the answer when the tool answered an error, `timed_out` on a
 * timeout). At most `TOOL_RESULT_CHARS`: a longer answer is cut and marked `truncated`.
 */
export function resultForModel(outcome: ToolRunOutcome): string {
  const body: Record<string, unknown> =
    outcome.status === 'succeeded'
      ? { ok: true, status: outcome.httpStatus, result: outcome.response ?? null }
      : {
          ok: false,
          error: outcome.error ?? `the tool run ${outcome.status}`,
          ...(outcome.status === 'timeout' ? { timed_out: true } : {}),
          ...(outcome.httpStatus !== null ? { status: outcome.httpStatus } : {}),
          ...(outcome.response !== undefined ? { result: outcome.response } : {}),
        };
  const text = JSON.stringify(body);
  if (text.length <= TOOL_RESULT_CHARS) return text;
  const answer = JSON.stringify(body.result);
  const room = TOOL_RESULT_CHARS - (text.length - answer.length) - 40;
  return JSON.stringify({ ...body, result: answer.slice(0, Math.max(0, room)), truncated: true });
}

/** Runs a call's on_call tools: what the pipeline needs, with the call's context bound. */
export interface OnCallTools {
  /** Sends the tool's request with checked arguments; never throws. */
  run(tool: ToolDefinition, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolRunOutcome>;
  /** The outcome of a run refused before any request (its arguments did not conform). */
  refused(tool: ToolDefinition, error: string): ToolRunOutcome;
}

/** `OnCallTools` for one call, through the shared runner (address guard, timeouts, 1 MB cap). */
export function callTools(
  runner: Pick<ToolRunner, 'run'>,
  context: Omit<ToolCallContext, 'args'>,
  clock: Clock = systemClock,
): OnCallTools {
  return {
    run: (tool, args, signal) => runner.run(tool, { ...context, args }, signal),
    refused: (tool, error) => ({
      name: tool.name,
      phase: 'on_call',
      status: 'failed',
      httpStatus: null,
      startedAt: clock.now(),
      durationMs: 0,
      error,
    }),
  };
}
