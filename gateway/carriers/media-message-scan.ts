/**
 * The JSON carriers' media messages (Twilio, Exotel, Plivo: fifty a second per stream, nearly all of their
 * traffic) read straight from the message bytes, without decoding the text and building its object tree.
 *
 * The scanner accepts only a strict subset of JSON that it reads with certainty: one object whose values are
 * strings or numbers, except `media`, an object of strings and numbers; strings of printable ASCII without
 * escapes; `event` exactly `"media"`; `event`, `media` and each media field at most once. Keys may come in any
 * order, with any JSON whitespace between tokens. Whatever it accepts is valid JSON, and the fields it reports
 * are what JSON.parse gives for them. Anything else (escapes, other bytes, literals, arrays, other nesting,
 * other events, repeated fields, invalid or truncated JSON) it declines, and the caller parses the message as
 * usual, so the adapters stay exactly as strict and as lenient as JSON.parse makes them.
 */

/** The media fields of one accepted message (undefined when absent). */
export interface ScannedMedia {
  track: string | number | undefined;
  /** A string of up to 15 digits comes as its number: the readers take a number or a numeric string alike. */
  timestamp: string | number | undefined;
  /** As `timestamp`. */
  chunk: string | number | undefined;
  payload: string | number | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const asciiBytes = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const EVENT_KEY = asciiBytes('event');
const MEDIA_KEY = asciiBytes('media');
const TRACK_KEY = asciiBytes('track');
const TIMESTAMP_KEY = asciiBytes('timestamp');
const CHUNK_KEY = asciiBytes('chunk');
const PAYLOAD_KEY = asciiBytes('payload');
const INBOUND = asciiBytes('inbound');

/** Digit runs up to this long are exact doubles, so their value is summed without making a string. */
const MAX_EXACT_DIGITS = 15;

// The fields the scanner tracks, as bits of `seen`.
const OTHER = 0;
const EVENT = 1;
const MEDIA = 2;
const TRACK = 4;
const TIMESTAMP = 8;
const CHUNK = 16;
const PAYLOAD = 32;

const EMPTY = Buffer.alloc(0);

/** What each byte may be inside a string the scanner reads: 1 a character, 2 the closing quote, 0 neither. */
const IN_STRING = new Uint8Array(256);
for (let c = 0x20; c <= 0x7e; c++) IN_STRING[c] = 1;
IN_STRING[QUOTE] = 2;
IN_STRING[BACKSLASH] = 0;

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

/** Reads one message at a time into its reused `fields`: a call must finish before the next starts. */
export class MediaMessageScanner {
  readonly fields: ScannedMedia = {
    track: undefined,
    timestamp: undefined,
    chunk: undefined,
    payload: undefined,
  };
  private data: Buffer = EMPTY;
  private at = 0;
  /** The last string's contents, or the last number: from `tokenStart` to before `tokenEnd`. */
  private tokenStart = 0;
  private tokenEnd = 0;
  private seen = 0;

  /** True when `data` is a media message of the accepted shape; its media fields are then in `fields`. */
  scan(data: Uint8Array): boolean {
    this.data = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.at = 0;
    this.seen = 0;
    const f = this.fields;
    f.track = undefined;
    f.timestamp = undefined;
    f.chunk = undefined;
    f.payload = undefined;
    // `event` is only recorded as seen when it is "media" (any other value declines the message).
    const accepted =
      this.object(false) &&
      this.skipWhitespace() === this.data.length &&
      (this.seen & (EVENT | MEDIA)) === (EVENT | MEDIA);
    this.data = EMPTY;
    return accepted;
  }

  /** An object at `at`: the top level (`inMedia` false) or the `media` object. */
  private object(inMedia: boolean): boolean {
    const data = this.data;
    if (data[this.skipWhitespace()] !== OPEN) return false;
    this.at++;
    if (data[this.skipWhitespace()] === CLOSE) {
      this.at++;
      return true;
    }
    for (;;) {
      if (!this.string()) return false;
      const field = inMedia ? this.mediaField() : this.topField();
      if (field !== OTHER) {
        if ((this.seen & field) !== 0) return false;
        this.seen |= field;
      }
      if (data[this.skipWhitespace()] !== COLON) return false;
      this.at++;
      this.skipWhitespace();
      if (!this.value(field)) return false;
      const c = data[this.skipWhitespace()];
      this.at++;
      if (c === CLOSE) return true;
      if (c !== COMMA) return false;
      this.skipWhitespace();
    }
  }

  private value(field: number): boolean {
    if (field === MEDIA) return this.object(true);
    const c = this.data[this.at];
    if (c === QUOTE) {
      if (!this.string()) return false;
      if (field === EVENT) return this.tokenIs(MEDIA_KEY);
      if (field === TRACK) this.fields.track = this.tokenIs(INBOUND) ? 'inbound' : this.tokenText();
      else if (field === TIMESTAMP) this.fields.timestamp = this.digitsValue() ?? this.tokenText();
      else if (field === CHUNK) this.fields.chunk = this.digitsValue() ?? this.tokenText();
      else if (field === PAYLOAD) this.fields.payload = this.tokenText();
      return true;
    }
    if (c === MINUS || isDigit(c)) {
      if (!this.number() || field === EVENT) return false;
      if (field === OTHER) return true;
      const value = this.digitsValue() ?? Number(this.tokenText());
      if (field === TRACK) this.fields.track = value;
      else if (field === TIMESTAMP) this.fields.timestamp = value;
      else if (field === CHUNK) this.fields.chunk = value;
      else this.fields.payload = value;
      return true;
    }
    return false;
  }

  private topField(): number {
    if (this.tokenIs(EVENT_KEY)) return EVENT;
    if (this.tokenIs(MEDIA_KEY)) return MEDIA;
    return OTHER;
  }

  private mediaField(): number {
    if (this.tokenIs(PAYLOAD_KEY)) return PAYLOAD;
    if (this.tokenIs(TRACK_KEY)) return TRACK;
    if (this.tokenIs(TIMESTAMP_KEY)) return TIMESTAMP;
    if (this.tokenIs(CHUNK_KEY)) return CHUNK;
    return OTHER;
  }

  /** A string of printable ASCII without escapes at `at`; its contents become the token. */
  private string(): boolean {
    const data = this.data;
    if (data[this.at] !== QUOTE) return false;
    const start = this.at + 1;
    const length = data.length;
    let i = start;
    // Four bytes a step while all four are characters: the AND of their classes is 1 only then.
    while (
      i + 4 <= length &&
      (IN_STRING[data[i]!]! &
        IN_STRING[data[i + 1]!]! &
        IN_STRING[data[i + 2]!]! &
        IN_STRING[data[i + 3]!]!) ===
        1
    ) {
      i += 4;
    }
    while (i < length && IN_STRING[data[i]!] === 1) i++;
    if (i === length || data[i] !== QUOTE) return false;
    this.tokenStart = start;
    this.tokenEnd = i;
    this.at = i + 1;
    return true;
  }

  /** A JSON number at `at` (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`); it becomes the token. */
  private number(): boolean {
    const data = this.data;
    const start = this.at;
    let i = start;
    if (data[i] === MINUS) i++;
    if (data[i] === ZERO) i++;
    else if (isDigit(data[i])) while (isDigit(data[i])) i++;
    else return false;
    if (data[i] === DOT) {
      i++;
      if (!isDigit(data[i])) return false;
      while (isDigit(data[i])) i++;
    }
    if (data[i] === LOWER_E || data[i] === UPPER_E) {
      i++;
      if (data[i] === PLUS || data[i] === MINUS) i++;
      if (!isDigit(data[i])) return false;
      while (isDigit(data[i])) i++;
    }
    this.tokenStart = start;
    this.tokenEnd = i;
    this.at = i;
    return true;
  }

  private tokenIs(expected: Uint8Array): boolean {
    const length = this.tokenEnd - this.tokenStart;
    if (length !== expected.length) return false;
    const data = this.data;
    for (let i = 0; i < length; i++) if (data[this.tokenStart + i] !== expected[i]) return false;
    return true;
  }

  /** The token's value when it is 1 to 15 plain digits (the same as Number() of its text), else undefined. */
  private digitsValue(): number | undefined {
    const length = this.tokenEnd - this.tokenStart;
    if (length === 0 || length > MAX_EXACT_DIGITS) return undefined;
    const data = this.data;
    let value = 0;
    for (let i = this.tokenStart; i < this.tokenEnd; i++) {
      const c = data[i]!;
      if (c < ZERO || c > NINE) return undefined;
      value = value * 10 + (c - ZERO);
    }
    return value;
  }

  /** The token's text: ASCII only, so one byte is one character. */
  private tokenText(): string {
    return this.data.toString('latin1', this.tokenStart, this.tokenEnd);
  }

  /** Moves past JSON whitespace; returns the new position. */
  private skipWhitespace(): number {
    const data = this.data;
    let at = this.at;
    while (at < data.length) {
      const c = data[at];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      at++;
    }
    this.at = at;
    return at;
  }
}
