import type { AgentSettings, ToolDefinition } from '../../core/agents/types.ts';
import type { ToolCall } from '../../engines/llm/types.ts';
import { type SilenceSettings, silenceSettings } from '../silence.ts';
import { END_CALL_FUNCTION, endCallFunction } from './end-call.ts';
import { OfferedTools } from './tools.ts';
import type { Dialog, DialogAction, DialogTurnContext } from './types.ts';
import { type CallVariables, substitute } from './variables.ts';

/**
 * An agent without a flow: one system prompt for the whole call, the first message, optionally end_call, and
 * the agent's on_call tools.
 */
export class SinglePromptDialog implements Dialog {
  private readonly context: DialogTurnContext;
  private readonly silenceSettings: SilenceSettings;
  private readonly tools: OfferedTools;
  private readonly taken: ReadonlySet<string>;

  constructor(
    private readonly agent: AgentSettings,
    private readonly variables: CallVariables,
    tools: readonly ToolDefinition[] = [],
  ) {
    this.tools = new OfferedTools(tools);
    const own = agent.end_call.enabled ? [endCallFunction()] : [];
    this.taken = new Set(own.map((f) => f.name));
    this.context = {
      system: substitute(agent.system_prompt, variables),
      functions: [...own, ...this.tools.functions(undefined, this.taken)],
      allowInterrupt: agent.behavior.interruptions !== 'off',
    };
    this.silenceSettings = silenceSettings(agent);
  }

  opening(): string {
    return substitute(this.agent.first_message, this.variables);
  }

  turnContext(): DialogTurnContext {
    return this.context;
  }

  onFunctionCall(call: ToolCall): DialogAction {
    if (call.name === END_CALL_FUNCTION && this.agent.end_call.enabled) {
      return {
        type: 'end_call',
        message: substitute(this.agent.end_call.message, this.variables),
        reason: 'assistant-ended-call',
      };
    }
    return this.tools.action(call, undefined, this.taken) ?? { type: 'unknown_function', name: call.name };
  }

  extracted(): Readonly<Record<string, unknown>> {
    return {};
  }

  currentNode(): string | undefined {
    return undefined;
  }

  silence(): SilenceSettings {
    return this.silenceSettings;
  }
}
