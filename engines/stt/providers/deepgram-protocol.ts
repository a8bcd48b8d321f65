/**
 * The Deepgram live transcription protocol (carrier-and-engine-protocols.md section 5), without I/O: the
 * connection URL, the server's messages, and the turn logic that makes one final transcript per turn.
 */
import type { SttEvent, TranscriptWord } from '../types.ts';

export interface ListenParams {
  model: string;
  /** BCP-47; sent as `deepgramLanguage` makes it, omitted when empty. */
  language: string;
  endpointingMs: number;
  utteranceEndMs: number;
  smartFormat: boolean;
}

/**
 * `wss://host[/prefix]/v1/listen?...` for canonical audio (linear16, 16 kHz, mono). What the turn-end policy
 * (pipeline/turn/end-of-turn.ts) needs: `interim_results`, so the text a pause follows ("... so") is known
 * before the final; `endpointing`, so the final with its punctuation comes as soon as a finished sentence may
 * end the turn; `utterance_end_ms`, a commit on word timings when line noise keeps `speech_final` away;
 * `smart_format`, for the punctuation that tells a finished sentence. `vad_events` marks speech starts.
 */
export function listenUrl(baseUrl: string, params: ListenParams): string {
  const url = new URL(baseUrl.replace(/^http/, 'ws'));
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/listen`;
  const query: Record<string, string> = {
    model: params.model,
    encoding: 'linear16',
    sample_rate: '16000',
    channels: '1',
    interim_results: 'true',
    endpointing: String(params.endpointingMs),
    utterance_end_ms: String(params.utteranceEndMs),
    vad_events: 'true',
    smart_format: String(params.smartFormat),
  };
  const language = deepgramLanguage(params.language);
  if (language !== '') query['language'] = language;
  url.search = new URLSearchParams(query).toString();
  return url.toString();
}

/**
 * The `language` Deepgram takes for a BCP-47 tag. Its models know regional English (`en-IN`, `en-GB`, `en-US`)
 * and Chinese variants (`zh-TW`, `zh-HK`) by their full tags, but most other languages only by the bare code
 * (`hi`, `ta`, `bn`; `hi-IN` is refused): those are reduced to it. `multi` (code switching) passes as is.
 */
export function deepgramLanguage(tag: string): string {
  const normalised = tag.trim().replace(/_/g, '-');
  const primary = normalised.split('-', 1)[0]?.toLowerCase() ?? '';
  return primary === 'en' || primary === 'zh' ? normalised : primary;
}

/** Text frames we send. */
export const KEEP_ALIVE = JSON.stringify({ type: 'KeepAlive' });
export const FINALIZE = JSON.stringify({ type: 'Finalize' });
export const CLOSE_STREAM = JSON.stringify({ type: 'CloseStream' });

export interface ResultsMessage {
  type: 'Results';
  isFinal: boolean;
  speechFinal: boolean;
  fromFinalize: boolean;
  transcript: string;
  confidence: number | undefined;
  words: TranscriptWord[];
}

export type ServerMessage =
  | ResultsMessage
  | { type: 'UtteranceEnd'; lastWordEndMs: number }
  | { type: 'SpeechStarted'; timestampMs: number }
  | { type: 'Other'; name: string };

/** One text frame from the server. Throws SyntaxError when it is not JSON. */
export function parseServerMessage(text: string): ServerMessage {
  const raw: unknown = JSON.parse(text);
  const message = isRecord(raw) ? raw : {};
  const type = typeof message['type'] === 'string' ? message['type'] : '';
  if (type === 'Results') {
    const channel = isRecord(message['channel']) ? message['channel'] : {};
    const alternatives = Array.isArray(channel['alternatives']) ? channel['alternatives'] : [];
    const best: Record<string, unknown> = isRecord(alternatives[0]) ? alternatives[0] : {};
    const words = Array.isArray(best['words']) ? best['words'].filter(isRecord).map(toWord) : [];
    return {
      type,
      isFinal: message['is_final'] === true,
      speechFinal: message['speech_final'] === true,
      fromFinalize: message['from_finalize'] === true,
      transcript: typeof best['transcript'] === 'string' ? best['transcript'].trim() : '',
      confidence: typeof best['confidence'] === 'number' ? best['confidence'] : undefined,
      words,
    };
  }
  if (type === 'UtteranceEnd') return { type, lastWordEndMs: seconds(message['last_word_end']) };
  if (type === 'SpeechStarted') return { type, timestampMs: seconds(message['timestamp']) };
  return { type: 'Other', name: type };
}

/**
 * Turns Deepgram's segments into our events. Interim results become `partial`s carrying the whole turn so far
 * (the finished segments plus the interim one). `is_final` segments are accumulated; the turn's one `final`
 * (`endOfTurn: true`) is emitted on `speech_final`, on a result of `Finalize` (`from_finalize`), or, as the
 * fallback when noise kept `speech_final` from coming, on `UtteranceEnd`. A turn with no words emits no final.
 */
export class TurnAssembler {
  readonly #segments: ResultsMessage[] = [];

  accept(message: ServerMessage): SttEvent[] {
    switch (message.type) {
      case 'SpeechStarted':
        return [{ type: 'speech_started', atMs: message.timestampMs }];
      case 'UtteranceEnd':
        return [...this.finish(true), { type: 'utterance_end', atMs: message.lastWordEndMs }];
      case 'Results':
        return this.#results(message);
      default:
        return [];
    }
  }

  /** Whatever the turn has accumulated, as a final (none when it has no words). */
  finish(endOfTurn: boolean): SttEvent[] {
    if (this.#segments.length === 0) return [];
    const segments = this.#segments.splice(0);
    const confidences = segments.flatMap((s) => (s.confidence === undefined ? [] : [s.confidence]));
    return [
      {
        type: 'final',
        text: segments.map((s) => s.transcript).join(' '),
        words: segments.flatMap((s) => s.words),
        endOfTurn,
        ...(confidences.length === 0 ? {} : { confidence: Math.min(...confidences) }),
      },
    ];
  }

  #results(message: ResultsMessage): SttEvent[] {
    if (!message.isFinal) {
      if (message.transcript === '') return [];
      const text = [...this.#segments.map((s) => s.transcript), message.transcript].join(' ');
      return [{ type: 'partial', text }];
    }
    if (message.transcript !== '') this.#segments.push(message);
    return message.speechFinal || message.fromFinalize ? this.finish(true) : [];
  }
}

function toWord(raw: Record<string, unknown>): TranscriptWord {
  const text = typeof raw['punctuated_word'] === 'string' ? raw['punctuated_word'] : raw['word'];
  return {
    word: typeof text === 'string' ? text : '',
    startMs: seconds(raw['start']),
    endMs: seconds(raw['end']),
    ...(typeof raw['confidence'] === 'number' ? { confidence: raw['confidence'] } : {}),
  };
}

/** Deepgram's times are seconds (floats); ours are whole milliseconds. */
function seconds(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
