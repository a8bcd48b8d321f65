import type { SttEvent } from '../../engines/stt/types.ts';
import type { SegmentEvent } from '../../engines/vad/segmenter.ts';
import { requiredSilence, type TurnWait } from './end-of-turn.ts';

/**
 * Endpointing: decides when the caller's turn has ended, so the agent answers fast but does not cut in.
 *
 * The turn ends after a silence following speech, counted from where the silence began (the VAD's
 * `speech_end.atMs`, not when the VAD could tell). The silence needed follows the turn-end policy
 * (end-of-turn.ts) on the latest transcript: `endpointing_ms` as a rule, less after a finished sentence, more
 * (bounded) after "and", "aur", "umm" or an incomplete clause.
 *
 * An STT commit (a `final` with `endOfTurn`: Deepgram `speech_final`, or its `UtteranceEnd` fallback) is
 * evidence that the caller stopped, not a verdict: the turn still waits the silence the policy asks of its text,
 * counted from the VAD's end of speech, or from the commit when the VAD has not heard the speech end (it lags the
 * STT by a window or two, and misses quiet speech) until a VAD speech end says where the silence began. The commit brings the final, punctuated words early, so an answer can be
 * started on them while the silence runs (speculative-reply.ts). Speech that resumes during the silence cancels
 * it. No turn ends before the caller has said anything (VAD speech, or a
 * transcript with words).
 *
 * A pure state machine: time is ms of audio, given with every input; `tick` lets time pass. After a turn ends,
 * transcripts are taken to belong to that turn (late finals) and ignored until the VAD hears speech again.
 */

export { CONTINUATION_FACTOR, CONTINUATION_MIN_MS, holdMs, SENTENCE_END_FACTOR } from './end-of-turn.ts';

export type EndpointReason =
  /** Plain silence of `endpointing_ms`. */
  | 'silence'
  /** Shorter silence: the transcript ended a sentence (or a closing phrase). */
  | 'sentence_end'
  /**
   * Longer silence: the transcript ended with a conjunction, filler or incomplete clause (or trailed off), and
   * the caller still did not go on.
   */
  | 'continuation';

export interface TurnEnd {
  type: 'turn_end';
  reason: EndpointReason;
  /** When the decision was made, ms of audio. */
  atMs: number;
  /** Silence waited after the caller's last speech (or the STT's commit, where the VAD had not heard it end), ms. */
  endpointMs: number;
  /** Silence the rule asked for, ms. */
  requiredMs: number;
  /** The turn's transcript as known when it ended (finals, then the latest partial). */
  transcript: string;
  /** The trailing word that lengthened the wait, for `continuation` (none when the text trailed off). */
  trailingWord?: string;
}

export interface EndpointerOptions {
  /** `behavior.endpointing_ms`: silence after speech that ends the turn. */
  endpointingMs: number;
}

type TranscriptEvent = Extract<SttEvent, { type: 'partial' | 'final' }>;

interface Required {
  ms: number;
  reason: EndpointReason;
  trailingWord?: string;
}

const REASON_OF_WAIT = {
  hold: 'continuation',
  normal: 'silence',
  finished: 'sentence_end',
} as const satisfies Record<TurnWait, EndpointReason>;

type Phase =
  /** No speech yet in this turn (or the last turn has just ended). */
  | { kind: 'waiting' }
  | { kind: 'speaking' }
  /**
   * Speech ended at `silenceStartMs`; the turn ends when the silence is long enough. `byCommit`: the STT's commit
   * started it, the VAD has not confirmed it.
   */
  | { kind: 'silence'; silenceStartMs: number; byCommit: boolean };

export class Endpointer {
  readonly endpointingMs: number;
  #phase: Phase = { kind: 'waiting' };
  #finals: string[] = [];
  #partial = '';
  /** A turn ended and no speech came since: transcripts are the ended turn's. */
  #closed = false;
  /** The STT committed the turn's words so far (nothing new came after its commit). */
  #committed = false;
  #nowMs = 0;
  #requiredFor: { text: string; committed: boolean; required: Required } | null = null;

  constructor(options: EndpointerOptions) {
    if (!(options.endpointingMs >= 0)) throw new RangeError('endpointingMs must be >= 0');
    this.endpointingMs = options.endpointingMs;
  }

  /** The turn's transcript so far. */
  get transcript(): string {
    return [...this.#finals, this.#partial].filter(Boolean).join(' ');
  }

  /** The STT committed the turn's words so far (it heard the caller stop) and nothing since says they went on. */
  get committed(): boolean {
    return this.#committed;
  }

  /** Whether the caller is speaking (per the VAD). */
  get speaking(): boolean {
    return this.#phase.kind === 'speaking';
  }

  /** A VAD segment boundary; the decision time is the event's `decidedAtMs`. */
  onVad(event: SegmentEvent): TurnEnd | null {
    this.#advance(event.decidedAtMs);
    if (event.type === 'speech_start') {
      if (this.#closed) this.#startTurn();
      this.#committed = false;
      this.#phase = { kind: 'speaking' };
      return null;
    }
    if (this.#phase.kind === 'silence') {
      // A commit started the count before the VAD could tell where the silence began: the VAD's account wins.
      this.#phase = { kind: 'silence', silenceStartMs: event.atMs, byCommit: false };
      return this.#checkSilence();
    }
    if (this.#phase.kind !== 'speaking') return null;
    this.#phase = { kind: 'silence', silenceStartMs: event.atMs, byCommit: false };
    return this.#checkSilence();
  }

  /**
   * The VAD heard voice in a window ending at `nowMs` (audio time) while it is in speech: a silence that only the
   * STT's commit started, before that window, is over (the caller went on; the VAD's speech end will start the
   * next one). Returns whether it took a commit back.
   */
  onVoice(nowMs: number): boolean {
    this.#advance(nowMs);
    // A VAD behind the STT still reads the speech before the commit: only voice after it counts.
    if (this.#phase.kind !== 'silence' || !this.#phase.byCommit || nowMs <= this.#phase.silenceStartMs)
      return false;
    this.#phase = { kind: 'speaking' };
    this.#committed = false;
    return true;
  }

  /** A partial or final transcript from the STT, received at `nowMs`. */
  onTranscript(event: TranscriptEvent, nowMs: number): TurnEnd | null {
    this.#advance(nowMs);
    if (this.#closed) return null;
    if (event.type === 'partial') {
      this.#partial = event.text.trim();
      if (this.#partial) this.#committed = false;
      // New words after a commit the VAD never confirmed: the caller went on.
      if (this.#partial && this.#phase.kind === 'silence' && this.#phase.byCommit)
        this.#phase = { kind: 'speaking' };
    } else {
      const text = event.text.trim();
      if (text) this.#finals.push(text);
      this.#partial = '';
      if (event.endOfTurn) this.#committed = this.#heardSpeech();
      else if (text) this.#committed = false;
      // The STT heard the caller stop where the VAD has not (yet): the silence is counted from the commit.
      if (event.endOfTurn && this.#heardSpeech() && this.#phase.kind !== 'silence')
        this.#phase = { kind: 'silence', silenceStartMs: this.#nowMs, byCommit: true };
    }
    return this.#checkSilence();
  }

  /** Lets time pass to `nowMs` (e.g. on every audio frame, or at `nextDeadlineMs`). */
  tick(nowMs: number): TurnEnd | null {
    this.#advance(nowMs);
    return this.#checkSilence();
  }

  /** When the turn will end if nothing else happens (ms of audio), or null while no silence is running. */
  nextDeadlineMs(): number | null {
    if (this.#phase.kind !== 'silence' || !this.#heardSpeech()) return null;
    return this.#phase.silenceStartMs + this.#required().ms;
  }

  /** Forget everything (a new call). */
  reset(): void {
    this.#startTurn();
    this.#phase = { kind: 'waiting' };
    this.#nowMs = 0;
  }

  #advance(nowMs: number): void {
    if (nowMs > this.#nowMs) this.#nowMs = nowMs;
  }

  #startTurn(): void {
    this.#closed = false;
    this.#committed = false;
    this.#finals = [];
    this.#partial = '';
  }

  #heardSpeech(): boolean {
    return this.#phase.kind !== 'waiting' || this.transcript.length > 0;
  }

  /** The silence the latest transcript calls for (kept until the transcript changes: ticks come every frame). */
  #required(): Required {
    const text = this.transcript;
    const committed = this.#committed;
    if (this.#requiredFor?.text === text && this.#requiredFor.committed === committed)
      return this.#requiredFor.required;
    const policy = requiredSilence(text, this.endpointingMs, committed);
    const reason = REASON_OF_WAIT[policy.wait];
    const required: Required = { ms: policy.ms, reason };
    if (reason === 'continuation' && policy.estimate.word !== undefined)
      required.trailingWord = policy.estimate.word;
    this.#requiredFor = { text, committed, required };
    return required;
  }

  #checkSilence(): TurnEnd | null {
    if (this.#phase.kind !== 'silence') return null;
    const silence = this.#nowMs - this.#phase.silenceStartMs;
    const required = this.#required();
    if (silence < required.ms) return null;
    return this.#end(required.reason, silence, required.ms, required.trailingWord);
  }

  #end(reason: EndpointReason, endpointMs: number, requiredMs: number, trailingWord?: string): TurnEnd {
    const event: TurnEnd = {
      type: 'turn_end',
      reason,
      atMs: this.#nowMs,
      endpointMs,
      requiredMs,
      transcript: this.transcript,
    };
    if (trailingWord !== undefined) event.trailingWord = trailingWord;
    this.#phase = { kind: 'waiting' };
    this.#closed = true;
    return event;
  }
}
