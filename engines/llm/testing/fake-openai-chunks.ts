/** What the fake Chat Completions server says: scripted replies as stream chunks or as one JSON completion. */

export interface FakeToolCall {
  id?: string;
  name: string;
  /** JSON text, sent in `fragments` pieces across chunks (default 3). */
  arguments: string;
  fragments?: number;
}

export interface FakeReply {
  /** Streamed word by word (each word with its leading space). */
  text?: string;
  toolCalls?: FakeToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`; null sends no finish reason at all. */
  finishReason?: string | null;
  usage?: { promptTokens: number; completionTokens: number; cost?: number };
  /** Overrides of the server's pacing for this reply. */
  firstTokenLatencyMs?: number;
  tokensPerSecond?: number;
}

export interface WireChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: number; delta: Record<string, unknown>; finish_reason: string | null }> | null;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost?: number };
}

export function words(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** Splits `text` into `count` nearly equal pieces (fewer when it is shorter). */
export function pieces(text: string, count: number): string[] {
  const n = Math.max(1, Math.min(count, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length === 0 ? [''] : out;
}

export function finishReasonFor(reply: FakeReply): string | null {
  if (reply.finishReason !== undefined) return reply.finishReason;
  return (reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop';
}

export function usageFor(reply: FakeReply, promptText: string): WireChunk['usage'] & object {
  const prompt = reply.usage?.promptTokens ?? words(promptText).length;
  const completion =
    reply.usage?.completionTokens ??
    words(reply.text ?? '').length +
      (reply.toolCalls ?? []).reduce((sum, call) => sum + pieces(call.arguments, 8).length, 0);
  const cost = reply.usage?.cost;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(cost === undefined ? {} : { cost }),
  };
}

/**
 * The reply's chunks before the finish: a role chunk with empty content (as OpenAI sends), one chunk per word,
 * then each tool call as a first fragment (index, id, name, empty arguments) and its argument pieces.
 */
export function contentChunks(reply: FakeReply, model: string, id: string): WireChunk[] {
  const chunk = (delta: Record<string, unknown>): WireChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: null }],
  });
  const chunks = [chunk({ role: 'assistant', content: '' })];
  for (const word of words(reply.text ?? '')) chunks.push(chunk({ content: word }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_fake_${index}`,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const piece of pieces(call.arguments, call.fragments ?? 3)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  return chunks;
}

export function finishChunk(reply: FakeReply, model: string, id: string): WireChunk | undefined {
  const reason = finishReasonFor(reply);
  if (reason === null) return undefined;
  return {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta: {}, finish_reason: reason }],
  };
}

export function usageChunk(
  reply: FakeReply,
  model: string,
  id: string,
  promptText: string,
  nullChoices: boolean,
): WireChunk {
  return {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: nullChoices ? null : [],
    usage: usageFor(reply, promptText),
  };
}

/** The non-streaming answer (`stream` false or absent). */
export function completion(reply: FakeReply, model: string, id: string, promptText: string): object {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_fake_${index}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReasonFor(reply),
      },
    ],
    usage: usageFor(reply, promptText),
  };
}
