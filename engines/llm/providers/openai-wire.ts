/**
 * The Chat Completions wire format, both ways: our `ChatRequest` as a request body, and stream chunks assembled
 * into `ChatEvent`s. Pure; the transport lives in `openai.ts`.
 */
import { randomUUID } from 'node:crypto';
import type OpenAI from 'openai';
import type { ChatEvent, ChatMessage, ChatRequest, ToolCall, Usage } from '../types.ts';

export type FinishReason = Extract<ChatEvent, { type: 'done' }>['finishReason'];

/** Which body field carries the reply length limit: OpenAI's newer models want the second, most servers the first. */
export type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

export function chatRequestBody(
  model: string,
  request: ChatRequest,
  maxTokensField: MaxTokensField,
): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
    model,
    messages: request.messages.map(wireMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  // An empty `tools` array is refused by several servers (vLLM, older llama.cpp): send it only when non-empty.
  if (request.functions !== undefined && request.functions.length > 0) {
    body.tools = request.functions.map((fn) => ({
      type: 'function',
      function: { name: fn.name, description: fn.description, parameters: fn.parameters },
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body[maxTokensField] = request.maxTokens;
  return body;
}

function wireMessage(message: ChatMessage): OpenAI.Chat.ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '' };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
  }
}

/**
 * The parts of a stream chunk we read. Everything is optional because servers differ: `choices` is `[]` or
 * `null` on the final usage chunk, `index` is missing on tool calls from some Ollama versions.
 */
export interface StreamChunk {
  choices?: Array<{
    index?: number;
    delta?: { content?: string | null; tool_calls?: ToolCallFragment[] | null } | null;
    finish_reason?: string | null;
  }> | null;
  usage?: {
    prompt_tokens?: number | null;
    completion_tokens?: number | null;
    /** Reported by some hosted routers (OpenRouter and the like). */
    cost?: number | null;
  } | null;
}

interface ToolCallFragment {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export function finishReasonOf(wire: string): FinishReason {
  switch (wire) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return wire;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'unknown';
  }
}

/**
 * Turns the chunks of one streamed reply into events: text deltas at once, each tool call once whole (its
 * fragments joined per `index`), then `done`.
 */
export class ReplyAssembler {
  private readonly pending = new Map<number, ToolCall>();
  private lastIndex = -1;
  private finishReason: FinishReason | undefined;
  private usage: Usage | undefined;

  /** True once the server sent a finish reason: the reply is complete even if the usage chunk never comes. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** The text and tool-call events this chunk completes, in order. */
  accept(chunk: StreamChunk): ChatEvent[] {
    const events: ChatEvent[] = [];
    if (chunk.usage !== undefined && chunk.usage !== null) {
      this.usage = {
        promptTokens: chunk.usage.prompt_tokens ?? 0,
        completionTokens: chunk.usage.completion_tokens ?? 0,
      };
      const cost = chunk.usage.cost;
      if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) this.usage.cost = cost;
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const content = choice.delta?.content;
      if (typeof content === 'string' && content !== '') events.push({ type: 'text', text: content });
      for (const fragment of choice.delta?.tool_calls ?? []) this.join(fragment);
      if (typeof choice.finish_reason === 'string') {
        this.finishReason = finishReasonOf(choice.finish_reason);
        events.push(...this.flushToolCalls(false));
      }
    }
    return events;
  }

  /**
   * The events that close the reply. A stream that ended without a finish reason was cut: its finish reason is
   * `unknown`, and only tool calls whose arguments already form a JSON object are kept (a half-sent call must
   * never run).
   */
  finish(): ChatEvent[] {
    const cut = this.finishReason === undefined;
    const events = this.flushToolCalls(cut);
    const done: ChatEvent = { type: 'done', finishReason: this.finishReason ?? 'unknown' };
    if (this.usage !== undefined) done.usage = this.usage;
    events.push(done);
    return events;
  }

  private join(fragment: ToolCallFragment): void {
    const index = this.indexOf(fragment);
    this.lastIndex = index;
    let call = this.pending.get(index);
    if (call === undefined) {
      call = { id: '', name: '', arguments: '' };
      this.pending.set(index, call);
    }
    if (fragment.id) call.id = fragment.id;
    // The name comes on the first fragment; some servers repeat it on later ones.
    if (fragment.function?.name && call.name === '') call.name = fragment.function.name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
  }

  private indexOf(fragment: ToolCallFragment): number {
    if (typeof fragment.index === 'number') return fragment.index;
    // No index: a fragment with a new id starts a call, any other continues the last one.
    if (fragment.id) {
      for (const [index, call] of this.pending) if (call.id === fragment.id) return index;
      return this.pending.size === 0 ? 0 : Math.max(...this.pending.keys()) + 1;
    }
    return Math.max(this.lastIndex, 0);
  }

  private flushToolCalls(onlyWholeObjects: boolean): ChatEvent[] {
    const events: ChatEvent[] = [];
    const indexes = [...this.pending.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const call = this.pending.get(index)!;
      if (call.name === '') continue;
      if (onlyWholeObjects && !isJsonObject(call.arguments)) continue;
      events.push({
        type: 'tool_call',
        call: {
          id: call.id || `call_${randomUUID().replaceAll('-', '')}`,
          name: call.name,
          arguments: call.arguments.trim() === '' ? '{}' : call.arguments,
        },
      });
    }
    this.pending.clear();
    return events;
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
