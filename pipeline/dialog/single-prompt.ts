import type { AgentSettings } from '../../core/agents/types.ts';
import type { ToolCall } from '../../engines/llm/types.ts';
import { type SilenceSettings, silenceSettings } from '../silence.ts';
import { END_CALL_FUNCTION, endCallFunction } from './end-call.ts';
import type { Dialog, DialogAction, DialogTurnContext } from './types.ts';
import { type CallVariables, substitute } from './variables.ts';

/** An agent without a flow: one system prompt for the whole call, the first message, and optionally end_call. */
export class SinglePromptDialog implements Dialog {
  private readonly context: DialogTurnContext;
  private readonly silenceSettings: SilenceSettings;

  constructor(
    private readonly agent: AgentSettings,
    private readonly variables: CallVariables,
  ) {
    this.context = {
      system: substitute(agent.system_prompt, variables),
      functions: agent.end_call.enabled ? [endCallFunction()] : [],
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
    return { type: 'unknown_function', name: call.name };
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
