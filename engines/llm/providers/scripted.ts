/**
 * The scripted dialog engine: deterministic, local, no model. For the offline sandbox, tests and benchmarks; its
 * provider is `scripted` and it never pretends to be a language model. It decides from the request alone:
 *
 * 1. No assistant turn yet and a system message holds a line starting with `[first message]`: it speaks the
 *    rest of that line (the dialog layer writes the agent's `first_message` or the flow's greeting there, with
 *    `firstMessageLine`).
 * 2. The last message is the caller's (`user`) and is unrecognised speech (`UNRECOGNIZED_SPEECH`: the caller spoke,
 *    no words are known): the first offered function other than `end_call` is called, with no arguments (in a
 *    flow, the node's first edge: a flow moves on by turns even when no words are recognised, so its authors put
 *    first the edge to take when the caller is not understood); with none offered, rule 3;
 * 3. The last message is the caller's words:
 *    a. goodbye words (see `isFarewell`: "bye", "thank you", "dhanyavaad", "alvida", "bas") and an `end_call`
 *       function offered: it calls `end_call`;
 *    b. otherwise the offered function whose description best fits the caller's words (`overlapScore`, at least
 *       `MATCH_THRESHOLD`; ties go to the function offered first; `end_call` only through rule a) is called,
 *       with the argument values `extractArguments` finds;
 * 4. Otherwise (no match, or the last message is a tool result): "Okay." followed by the first sentence of the
 *    last system message (marker lines left out), so a test can tell which flow node is active. The dialog layer
 *    therefore sends the active node's prompt as the last system message.
 *
 * Text streams word by word after `firstTokenDelayMs`, then `tokenDelayMs` between words. Usage counts words,
 * not tokens. Aborting ends the iteration quietly, with no `done`.
 */
import type {
  ChatEvent,
  ChatMessage,
  ChatRequest,
  FunctionSpec,
  LanguageModel,
  LlmCapabilities,
} from '../types.ts';
import { isUnrecognizedSpeech } from '../unrecognized-speech.ts';
import { pause } from './pause.ts';
import { extractArguments } from './scripted-extraction.ts';
import { contentWords, firstSentence, isFarewell, overlapScore, rawWords } from './scripted-words.ts';

export const FIRST_MESSAGE_MARKER = '[first message]';
export const END_CALL_FUNCTION = 'end_call';
/**
 * The score is shared / sqrt(|caller words| * |condition words|). At 0.2 one shared word is enough while both
 * sides are short (1 of 3 against 3 words: 0.33), and two are needed once their product passes 25 words (a
 * rambling answer against a long condition), where one common word is likely chance.
 */
export const MATCH_THRESHOLD = 0.2;
/** An acknowledgement quotes at most this much of the instruction, so a run-on prompt does not become a speech. */
const QUOTE_CHARS_MAX = 200;

export interface ScriptedDialogOptions {
  /** Reported as the model name. */
  model?: string;
  /** Before the first word or the tool call: simulated time to first token. */
  firstTokenDelayMs?: number;
  /** Between two words: simulated generation speed. */
  tokenDelayMs?: number;
}

/** The system-prompt line that carries the words to open the call with. */
export function firstMessageLine(text: string): string {
  return `${FIRST_MESSAGE_MARKER} ${text.replace(/\s+/g, ' ').trim()}`;
}

export type ScriptedDecision =
  | { kind: 'say'; text: string }
  | { kind: 'call'; name: string; arguments: Record<string, unknown> };

export function decide(request: ChatRequest): ScriptedDecision {
  const { messages } = request;
  const system = messages.filter((message) => message.role === 'system');
  if (!messages.some((message) => message.role === 'assistant')) {
    const first = firstMessageIn(system);
    if (first !== undefined) return { kind: 'say', text: first };
  }
  const last = messages.at(-1);
  const functions = request.functions ?? [];
  if (last?.role === 'user' && isUnrecognizedSpeech(last.content)) {
    const next = functions.find((fn) => fn.name !== END_CALL_FUNCTION);
    if (next !== undefined) return { kind: 'call', name: next.name, arguments: {} };
  } else if (last?.role === 'user') {
    const endCall = functions.find((fn) => fn.name === END_CALL_FUNCTION);
    if (endCall !== undefined && isFarewell(last.content)) return callOf(endCall, last.content);
    const match = bestFunction(last.content, functions);
    if (match !== undefined) return callOf(match, last.content);
  }
  return { kind: 'say', text: acknowledgement(system.at(-1)?.content ?? '') };
}

/** The offered function (other than `end_call`) whose description fits the caller's words best, if any fits. */
export function bestFunction(said: string, functions: readonly FunctionSpec[]): FunctionSpec | undefined {
  const callerWords = contentWords(said);
  let best: FunctionSpec | undefined;
  let bestScore = 0;
  for (const fn of functions) {
    if (fn.name === END_CALL_FUNCTION) continue;
    const score = overlapScore(callerWords, contentWords(fn.description));
    if (score >= MATCH_THRESHOLD && score > bestScore) {
      best = fn;
      bestScore = score;
    }
  }
  return best;
}

export class ScriptedDialogModel implements LanguageModel {
  readonly provider = 'scripted';
  readonly model: string;
  readonly capabilities: LlmCapabilities = {
    streaming: true,
    functionCalling: true,
    choosesTools: false,
  };
  private readonly firstTokenDelayMs: number;
  private readonly tokenDelayMs: number;

  constructor(options: ScriptedDialogOptions = {}) {
    this.model = options.model ?? 'scripted-dialog';
    this.firstTokenDelayMs = options.firstTokenDelayMs ?? 0;
    this.tokenDelayMs = options.tokenDelayMs ?? 0;
  }

  async *chat(request: ChatRequest): AsyncGenerator<ChatEvent, void, undefined> {
    const { signal } = request;
    if (signal?.aborted) return;
    const decision = decide(request);
    const promptTokens = promptWords(request);
    if (!(await pause(this.firstTokenDelayMs, signal))) return;
    if (decision.kind === 'call') {
      const args = JSON.stringify(decision.arguments);
      const call = { id: `call_scripted_${request.messages.length}`, name: decision.name, arguments: args };
      yield { type: 'tool_call', call };
      if (signal?.aborted) return;
      const completionTokens = rawWords(`${call.name} ${args}`).length;
      yield { type: 'done', finishReason: 'tool_calls', usage: { promptTokens, completionTokens } };
      return;
    }
    const words = decision.text.match(/\s*\S+/g) ?? [];
    for (const [index, word] of words.entries()) {
      if (index > 0 && !(await pause(this.tokenDelayMs, signal))) return;
      if (signal?.aborted) return;
      yield { type: 'text', text: word };
    }
    if (signal?.aborted) return;
    yield { type: 'done', finishReason: 'stop', usage: { promptTokens, completionTokens: words.length } };
  }
}

function firstMessageIn(system: readonly ChatMessage[]): string | undefined {
  for (const message of system) {
    for (const line of message.content.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.startsWith(FIRST_MESSAGE_MARKER)) {
        const text = trimmed.slice(FIRST_MESSAGE_MARKER.length).trim();
        if (text !== '') return text;
      }
    }
  }
  return undefined;
}

function callOf(fn: FunctionSpec, said: string): ScriptedDecision {
  return { kind: 'call', name: fn.name, arguments: extractArguments(fn.parameters, said) };
}

function acknowledgement(instruction: string): string {
  const withoutMarkers = instruction
    .split('\n')
    .filter((line) => !line.trim().startsWith(FIRST_MESSAGE_MARKER))
    .join('\n');
  let quote = firstSentence(withoutMarkers);
  if (quote.length > QUOTE_CHARS_MAX) {
    const cut = quote.lastIndexOf(' ', QUOTE_CHARS_MAX);
    quote = `${quote.slice(0, cut > 0 ? cut : QUOTE_CHARS_MAX)}...`;
  }
  return quote === '' ? 'Okay.' : `Okay. ${quote}`;
}

function promptWords(request: ChatRequest): number {
  let count = 0;
  for (const message of request.messages) count += rawWords(message.content).length;
  for (const fn of request.functions ?? []) count += rawWords(`${fn.name} ${fn.description}`).length;
  return count;
}
