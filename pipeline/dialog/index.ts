import type { AgentSettings, ToolDefinition } from '../../core/agents/types.ts';
import { FlowRuntime } from './flow-runtime.ts';
import { SinglePromptDialog } from './single-prompt.ts';
import type { Dialog } from './types.ts';
import type { CallVariables } from './variables.ts';

export { END_CALL_FUNCTION } from './end-call.ts';
export { FlowRuntime } from './flow-runtime.ts';
export { SinglePromptDialog } from './single-prompt.ts';
export type { Dialog, DialogAction, DialogTurnContext } from './types.ts';
export { type CallVariables, placeholders, substitute } from './variables.ts';

/**
 * The dialog an agent's settings call for: its flow when it has one, else its single prompt. `tools`: the
 * on_call tools it may offer the model (none when the dialog engine cannot choose tools).
 */
export function createDialog(
  agent: AgentSettings,
  variables: CallVariables,
  tools: readonly ToolDefinition[] = [],
): Dialog {
  return agent.flow
    ? new FlowRuntime(agent, agent.flow, variables, tools)
    : new SinglePromptDialog(agent, variables, tools);
}
