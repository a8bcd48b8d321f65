/** The languages live speech to text takes (`language_code`), as the interface lists them. */
export const SPEECH_LANGUAGES = [
  'hi-IN',
  'en-IN',
  'gu-IN',
  'mr-IN',
  'pa-IN',
  'bn-IN',
  'ta-IN',
  'te-IN',
  'kn-IN',
  'ml-IN',
] as const;

export type SpeechLanguage = (typeof SPEECH_LANGUAGES)[number];

export function isSpeechLanguage(value: string): value is SpeechLanguage {
  return (SPEECH_LANGUAGES as readonly string[]).includes(value);
}

/** Where the gateway serves live speech to text. */
export const LIVE_STT_PATH = '/v1/audio/transcriptions/stream';
