import { costForSeconds, type Paise } from '../money.ts';

/**
 * Prices of the speech products (README, "Speech APIs"). Money is integer paise; every charge is rounded up to
 * the paisa once, on the request's or session's total.
 */

/** Live speech to text and transcriptions: ₹18 per hour of audio, 30 paise a minute. */
export const TRANSCRIPTION_PER_MINUTE_PAISE: Paise = 30;

/** A live session does not start unless the wallet can cover this much audio. */
export const LIVE_STT_MINIMUM_SECONDS = 60;

/** Audio seconds billed for `audioMs` of audio received: per started second. */
export function billedAudioSeconds(audioMs: number): number {
  return Math.ceil(Math.max(0, audioMs) / 1000);
}

/** What `seconds` of transcribed audio cost: ₹18 an hour, the total rounded up to a paisa. */
export function transcriptionCost(seconds: number): Paise {
  return costForSeconds(seconds, TRANSCRIPTION_PER_MINUTE_PAISE);
}

/** Voice families of the catalogue (its `engine`), each with its price per 1,000 characters. */
export const SPEECH_PER_1000_CHARS_PAISE = {
  /** Local eSpeak NG voices: ₹0.50 per 1,000 characters (CPU on the platform's own nodes). */
  espeak: 50,
  /** OpenAI-compatible remote voices: ₹1.50 per 1,000 characters (a paid upstream engine). */
  openai: 150,
} as const satisfies Record<string, Paise>;

export type VoiceFamily = keyof typeof SPEECH_PER_1000_CHARS_PAISE;

/** What synthesising `characters` characters with a voice of `family` costs, rounded up to a paisa. */
export function speechCost(family: VoiceFamily, characters: number): Paise {
  return Math.ceil((Math.max(0, characters) * SPEECH_PER_1000_CHARS_PAISE[family]) / 1000);
}
