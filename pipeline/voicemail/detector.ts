import { normalizeWords } from '../turn/lexicon.ts';
import { MIN_TONE_FRAMES, ToneDetector } from './tone.ts';

/**
 * Answering machine detection, for the first seconds of a call: a voicemail greeting gives itself away by its
 * words ("leave a message after the beep", "abhi uplabdh nahi", "कृपया संदेश छोड़ें") or by its beep (a steady
 * single tone, see tone.ts). The first cue decides; later cues are kept as evidence. After a detection the
 * detector goes on listening for beeps (without a time limit) until `stop`, so that a message is left after
 * the beep, not over the greeting.
 *
 * A pure state machine: time is ms of call audio, given with every input.
 */

/**
 * Detection looks at the first 8 s of media: a greeting states itself within its first sentence or two, and a
 * person who answers speaks within a few seconds; later, a cue in the caller's words is conversation.
 */
export const VOICEMAIL_WINDOW_MS = 8000;
/**
 * Words of speech within the window are transcribed after it ends (a batch STT waits for the silence, then for
 * the server): transcripts arriving this much after the window still count.
 */
export const TRANSCRIPT_GRACE_MS = 2500;

/** What gave the machine away. */
export type VoicemailEvidence =
  | { kind: 'beep'; atMs: number; frequencyHz: number; tonality: number }
  | { kind: 'transcript'; atMs: number; phrase: string; text: string };

export type VoicemailSignal =
  | { type: 'detected'; evidence: VoicemailEvidence }
  /** A beep (confirmed tone) ended: the machine records from here. */
  | { type: 'beep_ended'; atMs: number; durationMs: number };

/** Phrases of voicemail greetings, English, Hindi (Devanagari) and Hinglish; matched as whole words. */
// biome-ignore format: a phrase list reads better packed
const CUES = [
  'leave a message', 'leave your message', 'leave me a message', 'leave a voice message', 'after the beep',
  'after the tone', 'at the tone', 'not available', 'unavailable', 'voicemail', 'voice mail', 'mailbox',
  'record your message', 'can\'t take your call', 'cannot take your call', 'unable to take your call',
  'कृपया संदेश', 'संदेश छोड़', 'बीप के बाद', 'उपलब्ध नहीं', 'बाद में कॉल', 'वॉइसमेल', 'मैसेज छोड़',
  'abhi uplabdh nahi', 'abhi uplabdh nahin', 'uplabdh nahi', 'uplabdh nahin', 'baad mein call', 'baad me call',
  'beep ke baad', 'sandesh chhod', 'message chhod',
];

/** Words as lexicon.ts normalizes them (case, punctuation, nukta, chandrabindu), so STT spellings meet the list. */
const tokens = normalizeWords;

const CUE_TOKENS = CUES.map((phrase) => ({ phrase, words: tokens(phrase) }));

/** The first voicemail phrase in a transcript, or null. */
export function findVoicemailCue(text: string): string | null {
  const words = tokens(text);
  for (let i = 0; i < words.length; i++) {
    for (const cue of CUE_TOKENS) {
      // A cue's last word may be a prefix of the spoken one: "छोड़" in "छोड़ें", "chhod" in "chhodiye".
      const n = cue.words.length;
      if (i + n > words.length) continue;
      let match = true;
      for (let j = 0; j < n && match; j++) {
        const said = words[i + j] as string;
        const wanted = cue.words[j] as string;
        match = j === n - 1 ? said.startsWith(wanted) : said === wanted;
      }
      if (match) return cue.phrase;
    }
  }
  return null;
}

export interface VoicemailDetectorOptions {
  /** Media analysed from the start of the call, ms. */
  windowMs: number;
}

export class VoicemailDetector {
  private readonly tones = new ToneDetector();
  private readonly found: VoicemailEvidence[] = [];
  private stopped = false;
  /** End of the last beep, if one ended. */
  lastBeepEndMs: number | null = null;

  constructor(private readonly options: VoicemailDetectorOptions) {}

  get detected(): boolean {
    return this.found.length > 0;
  }

  /** Cues seen, the deciding one first. */
  get evidence(): readonly VoicemailEvidence[] {
    return this.found;
  }

  /** Whether a beep is sounding now. */
  get beeping(): boolean {
    return this.tones.active;
  }

  /** One caller frame ending at `endMs`. Frames past the window are not analysed unless a machine was found. */
  frame(frame: Int16Array, endMs: number): VoicemailSignal[] {
    if (this.stopped || (!this.detected && endMs > this.options.windowMs + MAX_BEEP_CONFIRM_MS)) return [];
    const tone = this.tones.push(frame, endMs);
    if (!tone) return [];
    if (tone.type === 'tone_ended') {
      this.lastBeepEndMs = tone.atMs;
      return [{ type: 'beep_ended', atMs: tone.atMs, durationMs: tone.durationMs }];
    }
    if (!this.detected && tone.startMs > this.options.windowMs) return [];
    return this.add({
      kind: 'beep',
      atMs: tone.startMs,
      frequencyHz: tone.frequencyHz,
      tonality: tone.tonality,
    });
  }

  /** A final transcript of the caller's words, received at `atMs`. */
  transcript(text: string, atMs: number): VoicemailSignal[] {
    if (this.stopped || atMs > this.options.windowMs + TRANSCRIPT_GRACE_MS) return [];
    const phrase = findVoicemailCue(text);
    return phrase ? this.add({ kind: 'transcript', atMs, phrase, text }) : [];
  }

  /** No more analysis (the message was left, or the call is over). */
  stop(): void {
    this.stopped = true;
  }

  private add(evidence: VoicemailEvidence): VoicemailSignal[] {
    this.found.push(evidence);
    return this.found.length === 1 ? [{ type: 'detected', evidence }] : [];
  }
}

/** A beep that starts inside the window is confirmed this much later (MIN_TONE_FRAMES of 20 ms, and one more). */
const MAX_BEEP_CONFIRM_MS = (MIN_TONE_FRAMES + 1) * 20;

/**
 * Machines without a beep record once their greeting ends: after this much quiet the message starts anyway.
 * Beeps follow the greeting within about a second, so 2 s does not talk over one.
 */
export const SILENCE_BEFORE_MESSAGE_MS = 2000;
/** However the greeting goes on, the message starts this long after the detection (a looping greeting, music). */
export const MAX_WAIT_FOR_MESSAGE_MS = 10_000;

export interface MessageMoment {
  nowMs: number;
  detectedAtMs: number;
  beeping: boolean;
  lastBeepEndMs: number | null;
  /** Whether the machine is talking (VAD). */
  speaking: boolean;
  /** Since when it has been quiet (the VAD's last speech end, or the detection when it never spoke). */
  quietSinceMs: number;
}

/** Whether a voicemail message may start now: after the beep, or after the greeting went quiet, or after waiting. */
export function messageMayStart(m: MessageMoment): boolean {
  if (m.nowMs - m.detectedAtMs >= MAX_WAIT_FOR_MESSAGE_MS) return true;
  if (m.beeping || m.speaking) return false;
  return m.lastBeepEndMs !== null || m.nowMs - m.quietSinceMs >= SILENCE_BEFORE_MESSAGE_MS;
}
