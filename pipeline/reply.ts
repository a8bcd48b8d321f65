import type { ChatMessage, LanguageModel, ToolCall } from '../engines/llm/types.ts';
import { SentenceSplitter } from '../engines/tts/sentences.ts';
import type { Dialog, DialogAction } from './dialog/index.ts';

/** Speaks one piece of text: PCM16 16 kHz chunks. The composition root hands in the voice router. */
export interface Speaker {
  synthesize(request: {
    voiceId: string;
    text: string;
    language: string;
    signal?: AbortSignal;
  }): AsyncIterable<Int16Array>;
}

/** Where a reply's audio goes: the playout, by turn id. */
export interface ReplyAudioSink {
  audio(turnId: string, pcm: Int16Array, text: string): void;
}

/**
 * A model that keeps calling functions without speaking would never answer the caller; after this many rounds
 * of function calls in one reply, the reply ends with what was said.
 */
export const MAX_FUNCTION_ROUNDS = 4;

export interface ReplyTimings {
  requestAtWallMs: number;
  firstTokenAtWallMs?: number;
  firstClauseAtWallMs?: number;
  firstTtsRequestAtWallMs?: number;
  firstAudioAtWallMs?: number;
}

export interface ReplyResult {
  /** Everything the agent said in this reply (before any interruption trimmed it). */
  text: string;
  actions: DialogAction[];
  /** The dialog asked to hang up after this reply. */
  endCall: { message: string; reason: 'assistant-ended-call' } | undefined;
  timings: ReplyTimings;
  aborted: boolean;
}

export interface ReplyContext {
  turnId: string;
  signal: AbortSignal;
  /** The conversation so far; the reply appends its own messages to it. */
  history: ChatMessage[];
  dialog: Dialog;
  llm: LanguageModel;
  speaker: Speaker;
  voice: { voiceId: string; language: string };
  sink: ReplyAudioSink;
  wallNow: () => number;
}

/**
 * One agent reply: the language model streams text, clauses go to speech as soon as they are complete (the model
 * keeps writing while the first clause is spoken), and function calls move the dialog (a flow transition, then
 * the reply goes on from the new node; `end_call`). Everything stops when `signal` aborts: the model's stream,
 * the speech in progress, and no audio of this turn is handed on afterwards.
 */
export async function generateReply(ctx: ReplyContext): Promise<ReplyResult> {
  const timings: ReplyTimings = { requestAtWallMs: ctx.wallNow() };
  const spoken: string[] = [];
  const actions: DialogAction[] = [];
  let endCall: ReplyResult['endCall'];
  let speech: Promise<void> = Promise.resolve();

  const say = (text: string) => {
    const clause = text.trim();
    if (!clause || ctx.signal.aborted) return;
    spoken.push(clause);
    timings.firstClauseAtWallMs ??= ctx.wallNow();
    speech = speech.then(() => speak(ctx, clause, timings));
    // Handled here so a failure while the model still streams is not an unhandled rejection; `await speech`
    // below still throws it.
    speech.catch(() => undefined);
  };

  for (let round = 0; round < MAX_FUNCTION_ROUNDS && !ctx.signal.aborted && !endCall; round++) {
    const turn = ctx.dialog.turnContext();
    const splitter = new SentenceSplitter();
    const calls: ToolCall[] = [];
    let text = '';
    const stream = ctx.llm.chat({
      messages: [{ role: 'system', content: turn.system }, ...ctx.history],
      functions: turn.functions,
      signal: ctx.signal,
    });
    for await (const event of stream) {
      if (event.type === 'text') {
        timings.firstTokenAtWallMs ??= ctx.wallNow();
        text += event.text;
        for (const clause of splitter.push(event.text)) say(clause);
      } else if (event.type === 'tool_call') {
        timings.firstTokenAtWallMs ??= ctx.wallNow();
        calls.push(event.call);
      }
    }
    for (const clause of splitter.flush()) say(clause);
    if (ctx.signal.aborted) break;
    if (calls.length === 0) {
      if (text.trim()) ctx.history.push({ role: 'assistant', content: text.trim() });
      break;
    }
    ctx.history.push({ role: 'assistant', content: text.trim(), toolCalls: calls });
    for (const call of calls) {
      const action = ctx.dialog.onFunctionCall(call);
      actions.push(action);
      ctx.history.push({
        role: 'tool',
        toolCallId: call.id,
        content: JSON.stringify(functionResult(action)),
      });
      if (action.type === 'end_call') {
        endCall = { message: action.message, reason: action.reason };
        if (action.message) say(action.message);
      }
    }
  }
  await speech;
  return { text: spoken.join(' '), actions, endCall, timings, aborted: ctx.signal.aborted };
}

function functionResult(action: DialogAction): Record<string, unknown> {
  switch (action.type) {
    case 'transition':
      return { ok: true, now_at: action.to };
    case 'end_call':
      return { ok: true, ending: true };
    case 'unknown_function':
      return { ok: false, error: `no function named ${action.name}` };
  }
}

async function speak(ctx: ReplyContext, text: string, timings: ReplyTimings): Promise<void> {
  if (ctx.signal.aborted) return;
  timings.firstTtsRequestAtWallMs ??= ctx.wallNow();
  let first = true;
  for await (const chunk of ctx.speaker.synthesize({
    voiceId: ctx.voice.voiceId,
    language: ctx.voice.language,
    text,
    signal: ctx.signal,
  })) {
    if (ctx.signal.aborted) return;
    timings.firstAudioAtWallMs ??= ctx.wallNow();
    ctx.sink.audio(ctx.turnId, chunk, first ? text : '');
    first = false;
  }
}
