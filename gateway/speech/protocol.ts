import { isSpeechLanguage, type SpeechLanguage } from '../../core/speech/languages.ts';
import type { WordOut } from '../../pipeline/speech/utterances.ts';

/**
 * The wire protocol of live speech to text (PROTOCOL.md beside this file): the session's settings from the
 * URL query, the client's frames, the server's events and the close codes.
 */

export type SpeechEncoding = 'pcm16' | 'mulaw' | 'alaw';
export type Endpointing = 'manual' | 'auto';

export interface LiveSttSettings {
  readonly language: SpeechLanguage;
  readonly encoding: SpeechEncoding;
  readonly sampleRate: 8000 | 16000;
  readonly endpointing: Endpointing;
}

const ENCODINGS: readonly SpeechEncoding[] = ['pcm16', 'mulaw', 'alaw'];

/** The longest query string read; longer is refused before parsing. */
const MAX_QUERY_LENGTH = 2048;

export type SettingsResult = { ok: true; settings: LiveSttSettings } | { ok: false; message: string };

/** Settings from the query: `language_code` is required, the rest default to pcm16, 16000 and manual. */
export function settingsFromQuery(query: string): SettingsResult {
  if (query.length > MAX_QUERY_LENGTH) return { ok: false, message: 'the query string is too long' };
  const params = new URLSearchParams(query);
  const language = params.get('language_code');
  if (language === null) return { ok: false, message: 'language_code: is required (hi-IN, en-IN, ...)' };
  if (!isSpeechLanguage(language))
    return { ok: false, message: `language_code: '${clip(language)}' is not one of the supported languages` };
  const encoding = params.get('encoding') ?? 'pcm16';
  if (!(ENCODINGS as readonly string[]).includes(encoding))
    return { ok: false, message: `encoding: '${clip(encoding)}' is not one of pcm16, mulaw, alaw` };
  const rate = params.get('sample_rate') ?? '16000';
  if (rate !== '8000' && rate !== '16000')
    return { ok: false, message: `sample_rate: '${clip(rate)}' is not 8000 or 16000` };
  const endpointing = params.get('endpointing') ?? 'manual';
  if (endpointing !== 'manual' && endpointing !== 'auto')
    return { ok: false, message: `endpointing: '${clip(endpointing)}' is not manual or auto` };
  return {
    ok: true,
    settings: {
      language,
      encoding: encoding as SpeechEncoding,
      sampleRate: rate === '8000' ? 8000 : 16000,
      endpointing,
    },
  };
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/** A client frame, read. `audio` carries the raw bytes (from base64 or a binary frame). */
export type ClientFrame =
  | { type: 'speech_start' }
  | { type: 'speech_end' }
  | { type: 'end' }
  | { type: 'audio'; bytes: Uint8Array }
  | { type: 'bad'; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function readClientFrame(data: Uint8Array, binary: boolean): ClientFrame {
  if (binary) return { type: 'audio', bytes: data };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return { type: 'bad', message: 'a text frame must be a JSON object' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { type: 'bad', message: 'a text frame must be a JSON object' };
  const frame = value as Record<string, unknown>;
  switch (frame.event) {
    case 'speech_start':
    case 'speech_end':
    case 'end':
      return { type: frame.event };
    case 'audio_input': {
      const audio = frame.audio;
      if (typeof audio !== 'string' || audio.length === 0 || audio.length % 4 !== 0 || !BASE64.test(audio))
        return { type: 'bad', message: 'audio_input: audio must be non-empty base64' };
      return { type: 'audio', bytes: Buffer.from(audio, 'base64') };
    }
    default:
      return {
        type: 'bad',
        message: `unknown event ${JSON.stringify(String(frame.event ?? '')).slice(0, 48)}: expected speech_start, audio_input, speech_end or end`,
      };
  }
}

export type ServerEvent =
  | {
      event: 'session.begin';
      session_id: string;
      language_code: string;
      encoding: SpeechEncoding;
      sample_rate: number;
      endpointing: Endpointing;
      engine: string;
      limits: { max_session_secs: number; silence_timeout_secs: number };
      price: { per_hour_inr: number; billing: string };
    }
  | { event: 'transcript.partial'; utterance: number; text: string }
  | {
      event: 'transcript.final';
      utterance: number;
      text: string;
      words: WordOut[];
      language: string;
      start_ms: number;
      end_ms: number;
    }
  | {
      event: 'session.end';
      session_id: string;
      reason: string;
      audio_seconds_billed: number;
      cost_paise: number;
    }
  | { event: 'error'; code: ErrorEventCode; message: string };

/**
 * Codes of `error` events, each with the close code that follows it when it ends the session. `invalid_frame`
 * does not end it (the frame is dropped) until `too_many_bad_frames`.
 */
export const ERROR_CLOSE = {
  invalid_request: 4400,
  unsupported_language: 4400,
  invalid_frame: 4400,
  too_many_bad_frames: 4400,
  unauthorized: 4401,
  token_expired: 4401,
  token_reused: 4401,
  insufficient_balance: 4402,
  forbidden: 4403,
  silence_timeout: 4408,
  max_duration: 4408,
  too_many_sessions: 4429,
  service_unavailable: 4503,
  internal: 4500,
} as const;

export type ErrorEventCode = keyof typeof ERROR_CLOSE;
