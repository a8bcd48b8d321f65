/**
 * Language models: one streaming chat interface. Providers live in `providers/<name>.ts` and pass the shared
 * conformance suite in `testing/`.
 */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model produced it. */
  arguments: string;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** On assistant messages that called tools. */
  toolCalls?: ToolCall[];
  /** On tool messages: the call this answers. */
  toolCallId?: string;
}

export interface FunctionSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  functions?: FunctionSpec[];
  temperature?: number;
  maxTokens?: number;
  /** Cancels the request and its stream. */
  signal?: AbortSignal;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** What the provider says the request cost (`usage.cost`, in its billing currency), when it says. */
  cost?: number;
}

/** What a chat stream yields, in order: text deltas and tool calls as they complete, then one `done`. */
export type ChatEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | {
      type: 'done';
      finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'unknown';
      usage?: Usage;
    };

export interface LlmCapabilities {
  streaming: boolean;
  functionCalling: boolean;
  /**
   * Whether it can choose among a customer's tools from their descriptions and write their arguments (a
   * language model). The scripted dialog engine calls flow edges and `end_call` by its rules, and no tools.
   */
  choosesTools: boolean;
}

export interface LanguageModel {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: LlmCapabilities;
  /** Streams one reply. Errors before the first event are EngineErrors (retryable or not); aborting ends it. */
  chat(request: ChatRequest): AsyncIterable<ChatEvent>;
}
