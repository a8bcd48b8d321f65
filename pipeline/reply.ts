import type { ChatMessage, LanguageModel, ToolCall } from '../engines/llm/types.ts';
import { SentenceSplitter } from '../engines/tts/sentences.ts';
import type { Dialog, DialogAction } from './dialog/index.ts';
import type { FailureStage } from './fallback.ts';
import { fillerLine, type ToolRuns } from './tool-runs.ts';

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

/**
 * The first chunk of a reply goes to speech at its first comma, however short ("Sure,", "Okay,", "Haan,"): the
 * caller hears the agent one clause of the model's writing sooner (at 50 tokens/s, "Sure, I can check that for
 * you." is 160 ms more). A model that writes slower than the speech plays leaves at worst a comma's pause after
 * that first word. Later chunks keep the splitter's longer clauses, for their prosody.
 */
export const FIRST_CLAUSE_MIN_CHARS = 3;

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
  /** An engine failed: the model (its request or its stream) or speech. What was said before it stands. */
  failure?: { stage: Exclude<FailureStage, 'stt'>; error: Error };
}

/**
 * Facts the agent is given for one caller turn, beyond its prompt (a knowledge base too large for the prompt):
 * the passages that match what the caller just said.
 */
export interface TurnKnowledge {
  passagesFor(question: string): readonly string[];
}

/** The heading of the passages a turn is given, after the system prompt. */
export const TURN_KNOWLEDGE_HEADING =
  'Knowledge base passages for this turn (matching what the caller just said):';

/**
 * The system prompt of a reply: the dialog's, plus the knowledge passages that match the caller's latest message
 * (or, when it matches none, the two latest together).
 */
export function systemWithKnowledge(
  system: string,
  history: readonly ChatMessage[],
  knowledge: TurnKnowledge | undefined,
): string {
  if (!knowledge) return system;
  const said = history.filter((m) => m.role === 'user').map((m) => m.content);
  const latest = said.at(-1);
  if (!latest) return system;
  let passages = knowledge.passagesFor(latest);
  if (passages.length === 0 && said.length > 1) passages = knowledge.passagesFor(said.slice(-2).join('\n'));
  return passages.length > 0 ? `${system}\n\n${TURN_KNOWLEDGE_HEADING}\n${passages.join('\n')}` : system;
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
  /** Each function call's effect, as soon as the dialog applied it. */
  onAction?: (action: DialogAction) => void;
  /** The call's on_call tool runs (absent when no tools are offered). */
  tools?: ToolRuns;
  /** Knowledge retrieved per caller turn (absent when the prompt holds it all). */
  knowledge?: TurnKnowledge;
  /**
   * A reply started before the caller's turn was confirmed (speculative-reply.ts): the model is asked with
   * `conversation` (the history with the caller's words as they stood), and until `confirmed` resolves true the
   * reply changes nothing outside itself: only its first clause is spoken, its messages do not join `history`,
   * and function calls wait. Resolving false ends it there.
   */
  speculative?: { conversation: ChatMessage[]; confirmed: Promise<boolean> };
}

/**
 * One agent reply: the language model streams text, clauses go to speech as soon as they are complete (the model
 * keeps writing while the first clause is spoken), and function calls move the dialog (a flow transition, then
 * the reply goes on from the new node; `end_call`). Everything stops when `signal` aborts: the model's stream,
 * the speech in progress, and no audio of this turn is handed on afterwards.
 *
 * A tool the model chose runs while the reply waits for it (saying a filler line when it is slow), then the model
 * goes on with its result. A reply first waits for runs an earlier, interrupted reply left going.
 *
 * Engine failures do not throw: the reply ends with `failure` naming the stage. When the model fails, the
 * clauses already complete are still spoken; when speech fails, the model is stopped. Either way the history
 * may hold more or less than was heard: the caller of this function rewrites it to what was heard.
 */
export async function generateReply(ctx: ReplyContext): Promise<ReplyResult> {
  const timings: ReplyTimings = { requestAtWallMs: ctx.wallNow() };
  const spoken: string[] = [];
  const actions: DialogAction[] = [];
  const speechFailed = new AbortController();
  const signal = AbortSignal.any([ctx.signal, speechFailed.signal]);
  const local = { ...ctx, signal };
  let endCall: ReplyResult['endCall'];
  let failure: ReplyResult['failure'];
  let speech: Promise<void> = Promise.resolve();
  // Spoken but not yet in the conversation (a filler said before the model's words): joins the next message.
  let unrecorded = '';
  const recorded = (content: string) => {
    const joined = [unrecorded, content].filter(Boolean).join(' ');
    unrecorded = '';
    return joined;
  };

  // Unconfirmed, the conversation is the one the reply was started on, and only the first clause is spoken.
  let unconfirmed = ctx.speculative;
  const confirmed = async () => !unconfirmed || (await unconfirmed.confirmed);

  const say = (text: string) => {
    const clause = text.trim();
    if (!clause || signal.aborted) return;
    spoken.push(clause);
    timings.firstClauseAtWallMs ??= ctx.wallNow();
    const first = spoken.length === 1;
    speech = speech
      .then(async () => {
        if (first || (await confirmed())) await speak(local, clause, timings);
      })
      .catch((error: unknown) => {
        if (ctx.signal.aborted) return;
        failure ??= { stage: 'tts', error: asError(error) };
        speechFailed.abort();
      });
  };

  /** Waits for the tools still running; a filler line joins `into` (the message that called them) if slow. */
  const waitForTools = async (into?: ChatMessage) => {
    await ctx.tools?.wait(signal, () => {
      const line = fillerLine(ctx.voice.language);
      say(line);
      if (into) into.content = [into.content, line].filter(Boolean).join(' ');
      else unrecorded = [unrecorded, line].filter(Boolean).join(' ');
    });
  };
  await waitForTools();
  const withKnowledge = (system: string, conversation: readonly ChatMessage[]) =>
    systemWithKnowledge(system, conversation, ctx.knowledge);

  for (let round = 0; round < MAX_FUNCTION_ROUNDS && !signal.aborted && !endCall; round++) {
    const turn = ctx.dialog.turnContext();
    const splitter = new SentenceSplitter({ firstClauseMinChars: FIRST_CLAUSE_MIN_CHARS });
    const calls: ToolCall[] = [];
    let text = '';
    try {
      for await (const event of ctx.llm.chat({
        messages: [
          { role: 'system', content: withKnowledge(turn.system, unconfirmed?.conversation ?? ctx.history) },
          ...(unconfirmed?.conversation ?? ctx.history),
        ],
        functions: turn.functions,
        signal,
      })) {
        if (event.type === 'text') {
          timings.firstTokenAtWallMs ??= ctx.wallNow();
          text += event.text;
          for (const clause of splitter.push(event.text)) say(clause);
        } else if (event.type === 'tool_call') {
          timings.firstTokenAtWallMs ??= ctx.wallNow();
          calls.push(event.call);
        }
      }
    } catch (error) {
      // The clauses already complete are still spoken; the unfinished one is dropped.
      if (!signal.aborted) failure ??= { stage: 'llm', error: asError(error) };
      break;
    }
    for (const clause of splitter.flush()) say(clause);
    if (signal.aborted) break;
    // Nothing joins the conversation, and no function runs, before the turn is confirmed.
    if (unconfirmed) {
      if (!(await confirmed()) || signal.aborted) break;
      unconfirmed = undefined;
    }
    if (calls.length === 0) {
      const content = recorded(text.trim());
      if (content) ctx.history.push({ role: 'assistant', content });
      break;
    }
    const called: ChatMessage = { role: 'assistant', content: recorded(text.trim()), toolCalls: calls };
    ctx.history.push(called);
    for (const call of calls) {
      const action = ctx.dialog.onFunctionCall(call);
      actions.push(action);
      ctx.onAction?.(action);
      const result: ChatMessage = { role: 'tool', toolCallId: call.id, content: '' };
      ctx.history.push(result);
      if (action.type === 'tool' && ctx.tools) ctx.tools.start(action.tool, call, result);
      else result.content = JSON.stringify(functionResult(action));
      if (action.type === 'end_call') {
        endCall = { message: action.message, reason: action.reason };
        if (action.message) say(action.message);
      }
    }
    await waitForTools(called);
  }
  if (unrecorded) ctx.history.push({ role: 'assistant', content: recorded('') });
  await speech;
  const result: ReplyResult = {
    text: spoken.join(' '),
    actions,
    endCall,
    timings,
    aborted: ctx.signal.aborted,
  };
  if (failure && !ctx.signal.aborted) result.failure = failure;
  return result;
}

function functionResult(action: DialogAction): Record<string, unknown> {
  switch (action.type) {
    case 'transition':
      return { ok: true, now_at: action.to };
    case 'end_call':
      return { ok: true, ending: true };
    case 'unknown_function':
      return { ok: false, error: `no function named ${action.name}` };
    case 'tool':
      return { ok: false, error: `the tool ${action.tool.name} is not available on this call` };
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
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
