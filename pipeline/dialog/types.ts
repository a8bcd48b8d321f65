import type { ToolDefinition } from '../../core/agents/types.ts';
import type { ChatMessage, FunctionSpec, ToolCall } from '../../engines/llm/types.ts';
import type { SilenceSettings } from '../silence.ts';

/** What the dialog wants the session to do after the model called a function. */
export type DialogAction =
  | { type: 'transition'; from: string; to: string; label: string; extracted: Record<string, unknown> }
  /** Hang up after speaking `message` (may be empty). `confirmed` false means: ask first, then wait. */
  | { type: 'end_call'; message: string; reason: 'assistant-ended-call' }
  /** The model chose one of the customer's on_call tools: the reply runs it and gives the model its result. */
  | { type: 'tool'; tool: ToolDefinition; call: ToolCall }
  /** The model asked for something the dialog does not offer; answer it as a tool error and go on. */
  | { type: 'unknown_function'; name: string };

/** The dialog's view of the conversation, per turn: what to tell the model and what it may call. */
export interface DialogTurnContext {
  system: string;
  functions: FunctionSpec[];
  /** Whether the caller may interrupt replies of this turn (a node's `allow_interrupt`). */
  allowInterrupt: boolean;
}

export interface Dialog {
  /** The agent's opening line, spoken before the caller says anything ('' for none). */
  opening(): string;
  /** The system prompt and functions for the next reply. */
  turnContext(): DialogTurnContext;
  /** Applies a function call atomically: after it, the dialog is wholly on the old node or wholly on the new. */
  onFunctionCall(call: ToolCall): DialogAction;
  /** Values extracted so far (flow agents). */
  extracted(): Readonly<Record<string, unknown>>;
  /** The active node (flow agents), for logs and transcripts. */
  currentNode(): string | undefined;
  /** How the agent treats caller silence now (a flow node may set its own). */
  silence(): SilenceSettings;
}

export type { ChatMessage };
