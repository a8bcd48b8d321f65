import { bytesPerSample, isSupportedRate } from '../audio-edges.ts';
import { JsonStreamMedia } from '../json-stream.ts';
import type { AdapterContext, CarrierEvent, CarrierMedia, MediaFormat } from '../types.ts';
import {
  asNumber,
  asObject,
  asString,
  field,
  type JsonObject,
  parseEncoding,
  stringMap,
  takeToken,
} from '../wire.ts';

/**
 * Exotel voicebot stream (bidirectional). Snake_case fields whose shape varies between Exotel's own documents,
 * so every field is looked up in the `start` object and at the top level, in snake_case and camelCase.
 * Audio is raw PCM16 little-endian ("slin") at 8 kHz by default, 16/24 kHz when the URL asked for it
 * (`?sample-rate=16000`); `start.media_format` decides, and mu-law is accepted when it says so.
 *
 * Outbound: `media` with base64 audio in the negotiated codec and rate, in chunks of exactly 3,200 bytes
 * (a multiple of 320 bytes and at least 3,200, as Exotel requires; the last one before a mark is padded with
 * silence), then `mark` and `clear` with `stream_sid`.
 */

/** Exotel's minimum chunk (100 ms of 8 kHz PCM16); a multiple of its 320-byte unit. */
export const EXOTEL_CHUNK_BYTES = 3200;

export class ExotelMedia extends JsonStreamMedia {
  readonly carrier = 'exotel' as const;
  protected override readonly padBeforeMark = true;
  protected override readonly mediaTracks = false;
  private streamSid = '';

  /** `queryRate`: the `sample-rate` we put on the stream URL, used when the start message names none. */
  constructor(private readonly queryRate: number | undefined) {
    super();
  }

  protected readMessage(msg: JsonObject): CarrierEvent {
    switch (msg.event) {
      case 'connected':
        return { type: 'ignored' };
      case 'start':
        return this.parseStart(msg);
      case 'media':
        return this.mediaAudio(msg);
      case 'dtmf':
        return this.dtmf(msg);
      case 'mark': {
        const name = asString(field(asObject(msg.mark), 'name')) ?? asString(msg.name);
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'clear':
      case 'cleared':
        return { type: 'cleared' };
      case 'stop':
        return {
          type: 'stop',
          reason: asString(field(asObject(msg.stop), 'reason')) ?? asString(msg.reason),
        };
      default:
        return { type: 'bad', reason: 'unknown_event' };
    }
  }

  private parseStart(msg: JsonObject): CarrierEvent {
    const start = asObject(msg.start) ?? {};
    const read = (...keys: string[]): unknown => field(start, ...keys) ?? field(msg, ...keys);
    const streamSid = asString(read('stream_sid', 'streamSid'));
    if (!streamSid) return { type: 'bad', reason: 'bad_payload' };
    const mediaFormat = asObject(read('media_format', 'mediaFormat'));
    const encodingText = asString(field(mediaFormat, 'encoding') ?? read('encoding'));
    const encoding = encodingText === undefined ? 'pcm16' : parseEncoding(encodingText);
    const sampleRate =
      asNumber(field(mediaFormat, 'sample_rate', 'sampleRate') ?? read('sample_rate', 'sampleRate')) ??
      this.queryRate ??
      8000;
    if (!encoding || encoding === 'opus' || !isSupportedRate(sampleRate)) {
      return { type: 'unsupported_format', detail: `${encodingText} ${sampleRate} Hz` };
    }
    const format: MediaFormat = { encoding, sampleRate, channels: 1 };
    const customParameters = stringMap(read('custom_parameters', 'customParameters'));
    const token = takeToken(customParameters);
    this.streamSid = streamSid;
    this.begin(
      format,
      format,
      EXOTEL_CHUNK_BYTES / bytesPerSample(encoding),
      `{"event":"media","stream_sid":${JSON.stringify(streamSid)},"media":{"payload":"`,
    );
    const carrierCallId = asString(read('call_sid', 'callSid'));
    return {
      type: 'start',
      start: { streamId: streamSid, carrierCallId, customParameters, format },
      token,
      reply: [],
    };
  }

  protected markMessage(name: string): JsonObject {
    return { event: 'mark', stream_sid: this.streamSid, mark: { name } };
  }

  protected clearMessage(): JsonObject {
    return { event: 'clear', stream_sid: this.streamSid };
  }
}

export function createExotelMedia(ctx: AdapterContext): CarrierMedia {
  const rate = Number(ctx.query.get('sample-rate') ?? ctx.query.get('sample_rate') ?? Number.NaN);
  return new ExotelMedia(Number.isFinite(rate) && isSupportedRate(rate) ? rate : undefined);
}
