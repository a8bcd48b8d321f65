import type { ChatMessage } from '../engines/llm/types.ts';
import { isUnrecognizedSpeech } from '../engines/llm/unrecognized-speech.ts';
import type { ReplyAudioSink, ReplyResult } from './reply.ts';
import { requiredSilence } from './turn/end-of-turn.ts';

/**
 * Replies started before the caller's turn is confirmed (`behavior.speculative_replies`).
 *
 * Once the STT has given the caller's words and the caller has stopped, the turn-end policy may still be
 * deciding (a plain silence of `endpointing_ms` to wait out, a batch STT's late words, a VAD that has not yet
 * closed the speech). The model's request, and the speech of its first clause, start on those words at once;
 * the audio is held back. When the turn ends with the same words (case, punctuation and spacing aside) and the
 * conversation is as it was, the reply is the turn's answer: its held audio plays at once. When the caller goes
 * on, or the turn ends with other words, it is discarded: its requests are aborted, and nothing of it (audio,
 * text, events) reaches the caller, the transcript, the recording or the conversation, since it changes none of
 * them before it is confirmed (the model's own messages join the conversation only after confirmation, and a
 * function call, which may have effects, waits for it).
 *
 * A text that calls for more ("and", "aur", an incomplete clause) starts nothing: the policy holds such turns
 * open because callers mostly go on, so a start would mostly be spend thrown away.
 */

/** What happened to an early start: `started`, then `used` (it became the turn's reply) or `discarded`. */
export type SpeculationOutcome = 'started' | 'used' | 'discarded';

/** Why an early start was discarded. */
export type DiscardReason =
  /** The caller's words changed before the turn ended (more words, a corrected final). */
  | 'words_changed'
  /** The caller spoke again before the turn ended. */
  | 'caller_resumed'
  /** The turn ended with other words than the ones the reply was started on. */
  | 'turn_differs'
  /** The conversation or the dialog moved on meanwhile (another agent turn, a message added). */
  | 'conversation_changed'
  /** The reply failed before it was needed: the turn's reply starts afresh. */
  | 'failed'
  /** The call or the agent's state stopped it (the call ended, the agent was muted or spoke). */
  | 'stopped';

export interface SpeculationCounts {
  started: number;
  used: number;
  discarded: number;
}

/** What a start is given: it must abort everything on `signal`, and change nothing before `confirmed` is true. */
export interface SpeculationHooks {
  signal: AbortSignal;
  /** Resolves true once the reply is the turn's (adopted), false once it is discarded. */
  confirmed: Promise<boolean>;
  /** Where its audio goes: held until adopted, then the turn's playout. */
  sink: ReplyAudioSink;
}

export type StartReply = (text: string, hooks: SpeculationHooks) => Promise<ReplyResult>;

/** The words of a caller's turn as compared for an early start: lower case, no punctuation, single spaces. */
export function normalizeWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .split(/\s+/u)
    .filter(Boolean)
    .join(' ');
}

/**
 * What the model is asked with, for telling whether an early start still fits: the conversation (its last
 * caller message compared by its words) and the dialog's position.
 */
export function conversationBasis(messages: readonly ChatMessage[], node: string | undefined): string {
  const last = messages.length - 1;
  return JSON.stringify([
    node ?? null,
    ...messages.map((m, i) =>
      i === last && m.role === 'user' ? { ...m, content: normalizeWords(m.content) } : m,
    ),
  ]);
}

/** Consecutive caller turns are one message; a turn without words adds nothing to one that has some. */
export function addCallerMessage(history: ChatMessage[], content: string): void {
  const last = history.at(-1);
  if (last?.role !== 'user') history.push({ role: 'user', content });
  else if (isUnrecognizedSpeech(last.content)) last.content = content;
  else if (!isUnrecognizedSpeech(content)) last.content = `${last.content} ${content}`;
}

/** The conversation as the model would see it with the caller's `text` added (`history` is left as it is). */
export function withCallerMessage(history: readonly ChatMessage[], text: string): ChatMessage[] {
  const conversation = history.map((m) => ({ ...m }));
  addCallerMessage(conversation, text);
  return conversation;
}

/** Whether words the caller has stopped after are worth an early start (not a text the policy holds open). */
export function worthStartingEarly(text: string, endpointingMs: number): boolean {
  if (normalizeWords(text) === '') return false;
  return requiredSilence(text, endpointingMs).wait !== 'hold';
}

interface Held {
  pcm: Int16Array;
  text: string;
}

/** One early start, from its request to its adoption or discard. */
class Speculation {
  readonly controller = new AbortController();
  state: 'running' | 'adopted' | 'discarded' = 'running';
  /** The reply's result once it has ended (undefined while it runs). */
  settled: ReplyResult | undefined;
  readonly result: Promise<ReplyResult>;
  private readonly held: Held[] = [];
  private target: { turnId: string; sink: ReplyAudioSink } | null = null;
  private decide: (adopted: boolean) => void = () => {};

  constructor(
    readonly words: string,
    readonly basis: string,
    start: StartReply,
    text: string,
  ) {
    const confirmed = new Promise<boolean>((resolve) => {
      this.decide = resolve;
    });
    const sink: ReplyAudioSink = {
      audio: (_turnId, pcm, chunkText) => {
        if (this.state === 'discarded' || this.controller.signal.aborted) return;
        if (this.target) this.target.sink.audio(this.target.turnId, pcm, chunkText);
        else this.held.push({ pcm, text: chunkText });
      },
    };
    this.result = start(text, { signal: this.controller.signal, confirmed, sink });
    void this.result.then(
      (r) => {
        this.settled = r;
      },
      () => undefined,
    );
  }

  get failed(): boolean {
    return this.settled?.failure !== undefined;
  }

  discard(): void {
    if (this.state !== 'running') return;
    this.state = 'discarded';
    this.held.length = 0;
    this.controller.abort();
    this.decide(false);
  }

  /**
   * The reply becomes turn `turnId`'s: the audio held so far goes to `sink` now, the rest as it comes; `signal`
   * (the turn's) stops it. The result's first audio is when the caller could first hear it: not before now.
   */
  adopt(turnId: string, sink: ReplyAudioSink, signal: AbortSignal, nowWallMs: number): Promise<ReplyResult> {
    this.state = 'adopted';
    this.target = { turnId, sink };
    const stop = () => this.controller.abort();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    for (const chunk of this.held.splice(0)) sink.audio(turnId, chunk.pcm, chunk.text);
    this.decide(true);
    return this.result.then((r) => {
      const heardAt = r.timings.firstAudioAtWallMs;
      if (heardAt !== undefined) r.timings.firstAudioAtWallMs = Math.max(heardAt, nowWallMs);
      return r;
    });
  }
}

/** A reply started early for the turn's words: adopt it into the turn's playout, or discard it after all. */
export interface EarlyReply {
  adopt(turnId: string, sink: ReplyAudioSink, signal: AbortSignal): Promise<ReplyResult>;
  discard(reason: DiscardReason): void;
}

/**
 * The call's early starts, at most one at a time: `offer` the caller's words as they stand (a new start when
 * they changed), `withdraw` when the caller goes on, `claim` when the turn ends.
 */
export class SpeculativeReplies {
  private current: Speculation | null = null;
  readonly counts: SpeculationCounts = { started: 0, used: 0, discarded: 0 };

  constructor(
    private readonly start: StartReply,
    private readonly wallNow: () => number,
    private readonly onOutcome?: (outcome: SpeculationOutcome, reason?: DiscardReason) => void,
  ) {}

  /** Whether a reply started early is running (not yet adopted or discarded). */
  get pending(): boolean {
    return this.current !== null;
  }

  /**
   * The caller has stopped after `text`, the turn undecided: the reply starts now, unless one for the same words
   * and conversation (`basis`) is already running.
   */
  offer(text: string, basis: string): void {
    const words = normalizeWords(text);
    const current = this.current;
    if (current && current.words === words && current.basis === basis && !current.failed) return;
    if (current) {
      const sameWords = current.words === words && current.basis === basis;
      this.drop(sameWords ? 'failed' : current.basis === basis ? 'words_changed' : 'conversation_changed');
    }
    this.current = new Speculation(words, basis, this.start, text);
    this.counts.started++;
    this.onOutcome?.('started');
  }

  /** The reply started early will not be the answer (the caller went on, the call changed): discarded. */
  withdraw(reason: DiscardReason): void {
    if (this.current) this.drop(reason);
  }

  /**
   * The turn ended with `text` on conversation `basis` (the caller's message already in it): the reply started
   * for those words, if any; any other is discarded.
   */
  claim(text: string, basis: string): EarlyReply | null {
    const current = this.current;
    if (!current) return null;
    if (current.words !== normalizeWords(text)) {
      this.drop('turn_differs');
      return null;
    }
    if (current.basis !== basis) {
      this.drop('conversation_changed');
      return null;
    }
    if (current.failed) {
      this.drop('failed');
      return null;
    }
    this.current = null;
    return {
      adopt: (turnId, sink, signal) => {
        this.counts.used++;
        this.onOutcome?.('used');
        return current.adopt(turnId, sink, signal, this.wallNow());
      },
      discard: (reason) => this.discardOne(current, reason),
    };
  }

  private drop(reason: DiscardReason): void {
    const current = this.current;
    if (!current) return;
    this.current = null;
    this.discardOne(current, reason);
  }

  private discardOne(speculation: Speculation, reason: DiscardReason): void {
    if (speculation.state !== 'running') return;
    speculation.discard();
    this.counts.discarded++;
    this.onOutcome?.('discarded', reason);
  }
}
