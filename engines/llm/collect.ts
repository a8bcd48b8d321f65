import type { ChatEvent, ToolCall, Usage } from './types.ts';

/** A whole reply, for callers that do not stream (flow jobs, post-call analysis) and for tests. */
export interface CollectedReply {
  text: string;
  toolCalls: ToolCall[];
  /** Missing when the stream ended without `done` (it was aborted). */
  finishReason?: Extract<ChatEvent, { type: 'done' }>['finishReason'];
  usage?: Usage;
  events: ChatEvent[];
}

export async function collectReply(stream: AsyncIterable<ChatEvent>): Promise<CollectedReply> {
  const reply: CollectedReply = { text: '', toolCalls: [], events: [] };
  for await (const event of stream) {
    reply.events.push(event);
    if (event.type === 'text') reply.text += event.text;
    else if (event.type === 'tool_call') reply.toolCalls.push(event.call);
    else {
      reply.finishReason = event.finishReason;
      if (event.usage !== undefined) reply.usage = event.usage;
    }
  }
  return reply;
}
