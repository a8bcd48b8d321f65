import {
  endsSentence,
  endsWithClosing,
  normalizeWords,
  trailingContinuation,
  trailingIncompleteClause,
} from './lexicon.ts';

/**
 * The turn-end policy: how much silence after the caller's speech ends their turn, given what they said. One
 * policy for every path the turn can end on (the VAD's silence, an STT final, an STT commit such as Deepgram's
 * `speech_final` or `UtteranceEnd`, a batch STT's late words); the STT's commit is evidence that the caller
 * stopped, not a verdict that the turn is over.
 *
 * The text's end is scored for how likely the caller has finished (0: surely going on, 1: surely done), from
 * what the last words are, in English, Hindi, Hinglish and Gujarati:
 * - a trailing conjunction or filler ("so", "and", "aur", "matlab", "umm", "ane"): 0.05. Callers pause after
 *   these to think ("a table for two so ... around eight"); they almost never end a turn on one;
 * - a clause left incomplete (an article, possessive or preposition: "a table for", "my"; Hindi postpositions
 *   "ko", "se"; Gujarati "ma", "thi"): 0.15, the same pause for the missing word;
 * - trailing off ("so...", "well…"): 0.3;
 * - no cue: 0.5;
 * - a full stop, question mark, exclamation or danda (the STT's punctuation model heard a finished sentence):
 *   0.85;
 * - a closing phrase ("thank you", "that's all", "dhanyavaad", "aavjo"): 0.95.
 * Below `HOLD_BELOW` the turn waits `holdMs` (longer); from `FINISHED_FROM` up, `SENTENCE_END_FACTOR` of
 * `endpointing_ms` (shorter); in between, `endpointing_ms` as the agent set it, or the shorter wait when a
 * streaming STT committed the words (the STT's own evidence that the caller stopped).
 */

/** Fraction of `endpointing_ms` to wait when the text is finished: the caller has most likely done. */
export const SENTENCE_END_FACTOR = 0.4;
/** Multiple of `endpointing_ms` to wait when the text calls for more, unless `CONTINUATION_MIN_MS` is longer. */
export const CONTINUATION_FACTOR = 1.6;
/**
 * The shortest wait when the text calls for more: a caller's pause to think after "so" or "aur" lasts up to a
 * second whatever the agent's `endpointing_ms`; the VAD needs a further 250 ms of speech to tell they went on.
 */
export const CONTINUATION_MIN_MS = 1300;
/** Scores below this hold the turn open longer. */
export const HOLD_BELOW = 0.35;
/** Scores from this up end the turn sooner. */
export const FINISHED_FROM = 0.8;

export type TurnCue =
  /** A conjunction or filler ends the text. */
  | 'continuation'
  /** An article, possessive, preposition or postposition ends the text. */
  | 'incomplete_clause'
  /** The text trails off ("..."). */
  | 'trailing_off'
  | 'none'
  /** Terminal punctuation. */
  | 'sentence_end'
  /** A closing phrase ("thank you", "dhanyavaad"). */
  | 'closing';

export interface EndOfTurnEstimate {
  /** How likely the caller has finished, 0..1. */
  score: number;
  cue: TurnCue;
  /** The word that holds the turn open, for `continuation` and `incomplete_clause`. */
  word?: string;
}

export type TurnWait =
  /** Longer: the caller is likely mid-thought. */
  | 'hold'
  | 'normal'
  /** Shorter: the caller has likely finished. */
  | 'finished';

export interface RequiredSilence {
  ms: number;
  wait: TurnWait;
  estimate: EndOfTurnEstimate;
}

export function estimateEndOfTurn(text: string): EndOfTurnEstimate {
  const words = normalizeWords(text);
  const conjunction = trailingContinuation(words);
  if (conjunction) return { score: 0.05, cue: 'continuation', word: conjunction };
  const incomplete = trailingIncompleteClause(words);
  if (incomplete) return { score: 0.15, cue: 'incomplete_clause', word: incomplete };
  if (/(\.\.\.|\u2026)["'\u201D\u2019)\]]*$/u.test(text.trimEnd()))
    return { score: 0.3, cue: 'trailing_off' };
  if (endsWithClosing(words)) return { score: 0.95, cue: 'closing' };
  if (endsSentence(text)) return { score: 0.85, cue: 'sentence_end' };
  return { score: 0.5, cue: 'none' };
}

/**
 * The longest any turn waits on silence: `max(CONTINUATION_MIN_MS, CONTINUATION_FACTOR * endpointing_ms)`,
 * 1.3 s at the default 500 ms. A caller who said "and" and then hung on longer than this is answered.
 */
export function holdMs(endpointingMs: number): number {
  return Math.max(CONTINUATION_MIN_MS, endpointingMs * CONTINUATION_FACTOR);
}

/**
 * The silence after speech that ends a turn whose text is `text`. `sttCommitted`: a streaming STT committed these
 * words (it heard the caller stop after them, e.g. Deepgram's `speech_final`): words with no cue either way then
 * count as finished. Words that call for more are held open all the same.
 */
export function requiredSilence(text: string, endpointingMs: number, sttCommitted = false): RequiredSilence {
  const estimate = estimateEndOfTurn(text);
  if (estimate.score < HOLD_BELOW) return { ms: holdMs(endpointingMs), wait: 'hold', estimate };
  if (estimate.score >= FINISHED_FROM || sttCommitted) {
    return { ms: endpointingMs * SENTENCE_END_FACTOR, wait: 'finished', estimate };
  }
  return { ms: endpointingMs, wait: 'normal', estimate };
}
