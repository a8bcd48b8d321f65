import { bytesPerSample, isSupportedRate } from '../audio-edges.ts';
import { TwilioProtocolMedia } from '../twilio-protocol.ts';
import type { AdapterContext, CarrierEvent, CarrierMedia, MediaFormat } from '../types.ts';
import { asNumber, asObject, asString, field, type JsonObject, parseEncoding, stringMap } from '../wire.ts';

/**
 * Exotel voicebot stream (bidirectional), a near copy of Twilio Media Streams. Snake_case fields whose shape
 * varies between Exotel's own documents, so every field is looked up in the `start` object and at the top level,
 * in snake_case and camelCase, and a mark's name and a stop's reason also at the top level.
 * Audio is raw PCM16 little-endian ("slin") at 8 kHz by default, 16/24 kHz when the URL asked for it
 * (`?sample-rate=16000`); `start.media_format` decides, and mu-law is accepted when it says so.
 *
 * Outbound: `media` with base64 audio in the negotiated codec and rate, in chunks of exactly 3,200 bytes
 * (a multiple of 320 bytes and at least 3,200, as Exotel requires; the last one before a mark is padded with
 * silence), then `mark` and `clear` with `stream_sid`. Exotel also sends `clear` or `cleared` back.
 */

/** Exotel's minimum chunk (100 ms of 8 kHz PCM16); a multiple of its 320-byte unit. */
export const EXOTEL_CHUNK_BYTES = 3200;

export class ExotelMedia extends TwilioProtocolMedia {
  readonly carrier = 'exotel' as const;
  protected override readonly streamSidKey = 'stream_sid';
  protected override readonly padBeforeMark = true;
  protected override readonly mediaTracks = false;

  /** `queryRate`: the `sample-rate` we put on the stream URL, used when the start message names none. */
  constructor(private readonly queryRate: number | undefined) {
    super();
  }

  protected override markName(msg: JsonObject): string | undefined {
    return super.markName(msg) ?? asString(msg.name);
  }

  protected override stopReason(msg: JsonObject): string | undefined {
    return super.stopReason(msg) ?? asString(msg.reason);
  }

  protected override otherEvent(msg: JsonObject): CarrierEvent {
    return msg.event === 'clear' || msg.event === 'cleared' ? { type: 'cleared' } : super.otherEvent(msg);
  }

  protected parseStart(msg: JsonObject): CarrierEvent {
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
    const carrierCallId = asString(read('call_sid', 'callSid'));
    const chunkSamples = EXOTEL_CHUNK_BYTES / bytesPerSample(encoding);
    return this.started(streamSid, format, format, chunkSamples, carrierCallId, customParameters);
  }
}

export function createExotelMedia(ctx: AdapterContext): CarrierMedia {
  const rate = Number(ctx.query.get('sample-rate') ?? ctx.query.get('sample_rate') ?? Number.NaN);
  return new ExotelMedia(Number.isFinite(rate) && isSupportedRate(rate) ? rate : undefined);
}
