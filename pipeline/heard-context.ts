import type { ChatMessage } from '../engines/llm/types.ts';

/** Marks an agent message the caller cut off, so the model knows it stopped there. */
export const CUT_OFF_MARK = '…';

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/**
 * The model must know what the caller actually heard, not what it meant to say. Rewrites the messages an agent
 * turn appended to the conversation (from index `start` on) so that their assistant text is `heard` and no more:
 * text is kept in order, word by word, across the turn's assistant messages; the rest is dropped, and the
 * message where the caller cut in ends with `CUT_OFF_MARK`. Heard text the history does not hold yet (the model
 * was still writing when the caller cut in) becomes a new assistant message. Function calls and their results
 * stay: what they did (a flow transition) happened. Assistant messages left without text or calls are removed.
 */
export function truncateToHeard(history: ChatMessage[], start: number, heard: string): void {
  let remaining = words(heard);
  let lastKept = -1;
  let dropped = false;
  for (let i = start; i < history.length; i++) {
    const message = history[i] as ChatMessage;
    if (message.role !== 'assistant') continue;
    const said = words(message.content);
    const kept = said.slice(0, remaining.length);
    remaining = remaining.slice(kept.length);
    if (kept.length > 0) lastKept = i;
    if (kept.length < said.length) {
      dropped = true;
      message.content = kept.join(' ');
    }
  }
  if (remaining.length > 0) {
    history.push({ role: 'assistant', content: `${remaining.join(' ')}${CUT_OFF_MARK}` });
  } else if (dropped && lastKept >= 0) {
    const message = history[lastKept] as ChatMessage;
    message.content = `${message.content}${CUT_OFF_MARK}`;
  }
  for (let i = history.length - 1; i >= start; i--) {
    const message = history[i] as ChatMessage;
    if (message.role === 'assistant' && !message.content && !message.toolCalls?.length) history.splice(i, 1);
  }
}
