/**
 * Streaming sentence splitter: LLM text deltas in, speakable chunks out, so TTS can start on the first sentence
 * while the model is still writing the rest.
 *
 * A chunk ends at `.`, `?`, `!`, `…` followed by whitespace, at the Indic danda `।` and double danda `॥`, and at a
 * newline. A `.` does not end a chunk in a decimal or a URL (no whitespace follows), after an abbreviation
 * (`Dr.`, `Mr.`, `Rs.`, `डॉ.`), after an initial (`A. P. J.`), after a dotted word (`e.g.`, `U.S.`) or after a list
 * number that starts the chunk (`1. Buy milk`). Closing quotes and brackets stay with their sentence. A long
 * clause is cut at `,` `;` `:` (right after a word; after a digit only before a space) once it reaches
 * `clauseMinChars` (a smaller figure for the first chunk, so the first
 * audio is not held back by a long opening sentence), and text with no boundary at all is cut at the last space
 * before `maxChars`.
 *
 * Decisions depend only on the text, never on how it was cut into deltas: feeding it whole or a character at a
 * time gives the same chunks (a property test pins this down). That needs at most one character of lookahead
 * beyond a run of terminators and closing marks, so a chunk may wait for the next delta or `flush()`.
 */

export interface SentenceSplitterOptions {
  /** Cut at a comma, semicolon or colon once the chunk has this many characters; 0 disables. Default 60. */
  clauseMinChars?: number;
  /** As `clauseMinChars`, for the first chunk of the stream. Default 24. */
  firstClauseMinChars?: number;
  /** No chunk is longer than this: without a boundary, cut at the last space before it. Default 300. */
  maxChars?: number;
}

const DEFAULTS = {
  clauseMinChars: 60,
  firstClauseMinChars: 24,
  maxChars: 300,
} as const satisfies Required<SentenceSplitterOptions>;

/** Terminators that end a sentence when whitespace follows. */
const SOFT_ENDS = new Set(['.', '?', '!', '…']);
/** Terminators that always end a sentence (they never occur inside numbers, URLs or abbreviations). */
const HARD_ENDS = new Set(['।', '॥']);
/** Marks that stay with the sentence they close. */
const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '}', '»']);
const OPENERS = /^["'“‘([{«]+/;
const CLAUSE_ENDS = new Set([',', ';', ':', '،']);

/** Lower-case words that take a `.` without ending a sentence (English, Indian English, Hindi, Gujarati, Marathi). */
// biome-ignore format: a word list reads better packed
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'rs', 'vs', 'approx', 'dept', 'govt', 'ltd', 'pvt',
  'co', 'inc', 'corp', 'smt', 'shri', 'sri', 'kum', 'er', 'adv', 'capt', 'col', 'gen', 'lt', 'sgt', 'rd', 'ave',
  'fig', 'vol', 'pg', 'pp', 'tel', 'jan', 'feb', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
  'डॉ', 'श्री', 'श्रीमती', 'सुश्री', 'कु', 'रु', 'सं', 'पृ', 'ડૉ', 'શ્રી', 'રૂ',
]);

/** Words that take a `.` without ending a sentence only before a number (`No. 5`, but `No. I can't.`). */
const NUMBER_ABBREVIATIONS = new Set(['no', 'nos']);

const WHITESPACE = /\s/;
/** The last character of a word: a letter, or a combining mark (Devanagari and Gujarati vowel signs). */
const WORD_END = /[\p{L}\p{M}]/u;
const DIGITS = /^\d+$/;
const DIGIT = /\d/;
/** A single capital letter (an initial), except the pronoun `I`. */
/** Letters joined by dots, the last dot being the one examined: `e.g`, `i.e`, `U.S`, `p.m`. */
const DOTTED = /^(\p{L}\.)+\p{L}$/u;
const INITIAL = /^(?!I$)\p{Lu}$/u;

function isSpace(char: string | undefined): boolean {
  return char !== undefined && WHITESPACE.test(char);
}

export class SentenceSplitter {
  readonly #options: Required<SentenceSplitterOptions>;
  #buffer = '';
  /** Start of the current chunk in the buffer (leading whitespace already skipped when > 0). */
  #start = 0;
  /** Next index to examine. */
  #cursor = 0;
  #emitted = 0;

  constructor(options: SentenceSplitterOptions = {}) {
    this.#options = { ...DEFAULTS, ...options };
    if (this.#options.maxChars < 2) throw new RangeError('maxChars must be at least 2');
  }

  /** Adds a text delta; returns the chunks it completed (possibly none). */
  push(delta: string): string[] {
    this.#buffer += delta;
    return this.#scan(false);
  }

  /** End of the text: returns what is left as the last chunks and resets for a new stream. */
  flush(): string[] {
    const chunks = this.#scan(true);
    const rest = this.#buffer.slice(this.#start).trim();
    if (rest !== '') chunks.push(rest);
    this.#buffer = '';
    this.#start = 0;
    this.#cursor = 0;
    this.#emitted = 0;
    return chunks;
  }

  #scan(final: boolean): string[] {
    const chunks: string[] = [];
    const text = this.#buffer;
    while (this.#cursor < text.length) {
      const i = this.#cursor;
      if (i === this.#start && isSpace(text[i])) {
        // A chunk never starts with whitespace, so lengths do not depend on where deltas were cut.
        this.#start = this.#cursor = i + 1;
        continue;
      }
      const end = this.#boundaryAt(text, i, final);
      if (end === 'wait') break;
      if (end !== undefined && end - this.#start <= this.#options.maxChars) {
        this.#emit(chunks, end);
        continue;
      }
      if (i + 1 - this.#start >= this.#options.maxChars) {
        this.#emit(chunks, this.#lastSpaceCut(text, i));
        continue;
      }
      this.#cursor = i + 1;
    }
    // Drop consumed text so a long stream does not grow the buffer.
    if (this.#start > 0) {
      this.#buffer = text.slice(this.#start);
      this.#cursor -= this.#start;
      this.#start = 0;
    }
    return chunks;
  }

  /** Where the chunk ends if the character at `i` closes it (exclusive index), undefined if not, or 'wait'. */
  #boundaryAt(text: string, i: number, final: boolean): number | 'wait' | undefined {
    const char = text[i]!;
    if (char === '\n') return i;
    const hard = HARD_ENDS.has(char);
    if (hard || SOFT_ENDS.has(char)) {
      let j = i + 1;
      while (j < text.length && (SOFT_ENDS.has(text[j]!) || HARD_ENDS.has(text[j]!) || CLOSERS.has(text[j]!)))
        j++;
      if (j === text.length && !final) return 'wait';
      if (!hard && !(j === text.length || isSpace(text[j]))) return undefined;
      if (char !== '.' || hard) return j;
      const notAnEnd = this.#dotIsNotAnEnd(text, i, j, final);
      return notAnEnd === 'wait' ? 'wait' : notAnEnd ? undefined : j;
    }
    if (CLAUSE_ENDS.has(char)) {
      const min = this.#emitted === 0 ? this.#options.firstClauseMinChars : this.#options.clauseMinChars;
      if (min <= 0 || i + 1 - this.#start < min) return undefined;
      // After a word, the mark ends the clause whatever follows, so "Sure," goes to speech without waiting for
      // the model's next delta; after a digit it may be inside a number ("1,25,000"), which only a space rules out.
      if (i > this.#start && WORD_END.test(text[i - 1]!)) return i + 1;
      if (i + 1 === text.length) return final ? i + 1 : 'wait';
      return isSpace(text[i + 1]) ? i + 1 : undefined;
    }
    return undefined;
  }

  /**
   * True when the `.` at `i` (its run of marks ending at `j`) belongs to an abbreviation, an initial, a dotted word
   * or a leading list number; 'wait' when that depends on text not yet seen.
   */
  #dotIsNotAnEnd(text: string, i: number, j: number, final: boolean): boolean | 'wait' {
    let w = i;
    while (w > this.#start && !isSpace(text[w - 1])) w--;
    const word = text.slice(w, i).replace(OPENERS, '');
    if (word === '') return false;
    const lower = word.toLowerCase();
    if (ABBREVIATIONS.has(lower)) return true;
    if (NUMBER_ABBREVIATIONS.has(lower) && j === i + 1) {
      let k = j;
      while (k < text.length && isSpace(text[k])) k++;
      if (k === text.length) return final ? false : 'wait';
      return DIGIT.test(text[k]!);
    }
    if (INITIAL.test(word)) return true;
    if (DOTTED.test(word)) return true;
    return DIGITS.test(word) && text.slice(this.#start, w).trim() === '';
  }

  /** The cut for an over-long chunk ending at `i`: after the last whitespace, else right after `i`. */
  #lastSpaceCut(text: string, i: number): number {
    for (let k = i; k > this.#start; k--) if (isSpace(text[k])) return k;
    return i + 1;
  }

  #emit(chunks: string[], end: number): void {
    const chunk = this.#buffer.slice(this.#start, end).trim();
    if (chunk !== '') {
      chunks.push(chunk);
      this.#emitted++;
    }
    this.#start = end;
    this.#cursor = end;
  }
}

/** Splits a whole text into chunks, as a stream of one delta followed by `flush()` would. */
export function splitSentences(text: string, options?: SentenceSplitterOptions): string[] {
  const splitter = new SentenceSplitter(options);
  return [...splitter.push(text), ...splitter.flush()];
}

/**
 * Splits a text into pieces of at most `maxChars` characters for an engine with an input limit, cutting at
 * sentence boundaries (whole sentences packed greedily), else at spaces.
 */
export function packSentences(text: string, maxChars: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const sentence of splitSentences(text, { clauseMinChars: 0, firstClauseMinChars: 0, maxChars })) {
    if (current === '') current = sentence;
    else if (current.length + 1 + sentence.length <= maxChars) current += ' ' + sentence;
    else {
      pieces.push(current);
      current = sentence;
    }
  }
  if (current !== '') pieces.push(current);
  return pieces;
}
