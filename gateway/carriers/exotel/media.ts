import {
  asNumber,
  asObject,
  asString,
  audioEvent,
  base64AudioMessages,
  bytesPerSample,
  control,
  decodeBase64,
  encoderFor,
  field,
  InboundAudio,
  isSupportedRate,
  type JsonObject,
  OutboundAudio,
  parseEncoding,
  parseJsonObject,
  stringMap,
  takeToken,
} from '../common.ts';
import type {
  AdapterContext,
  CarrierEvent,
  CarrierEventSink,
  CarrierMedia,
  MediaFormat,
  WireMessage,
} from '../types.ts';

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

export class ExotelMedia implements CarrierMedia {
  readonly carrier = 'exotel' as const;
  readonly pacedOutput = false;
  private streamSid = '';
  private inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;
  private mediaPrefix = '';

  /** `queryRate`: the `sample-rate` we put on the stream URL, used when the start message names none. */
  constructor(private readonly queryRate: number | undefined) {}

  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void {
    emit(this.read(data, isBinary));
  }

  private read(data: Uint8Array, isBinary: boolean): CarrierEvent {
    if (isBinary) return { type: 'bad', reason: 'unexpected_binary' };
    const msg = parseJsonObject(data);
    if (!msg) return { type: 'bad', reason: 'malformed' };
    switch (msg.event) {
      case 'connected':
        return { type: 'ignored' };
      case 'start':
        return this.parseStart(msg);
      case 'media': {
        if (!this.inbound) return { type: 'bad', reason: 'media_before_start' };
        const media = asObject(msg.media);
        const timestamp = asNumber(field(media, 'timestamp'));
        const chunk = asNumber(field(media, 'chunk'));
        return audioEvent(this.inbound, decodeBase64(field(media, 'payload')), timestamp, chunk);
      }
      case 'dtmf': {
        const dtmf = asObject(msg.dtmf) ?? msg;
        const digit = asString(field(dtmf, 'digit', 'digits'));
        if (!digit) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'dtmf', digit, durationMs: asNumber(field(dtmf, 'duration')) };
      }
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
    this.inbound = new InboundAudio(format);
    const chunkSamples = EXOTEL_CHUNK_BYTES / bytesPerSample(encoding);
    this.outbound = new OutboundAudio(format, chunkSamples, encoderFor(encoding)!);
    this.mediaPrefix = `{"event":"media","stream_sid":${JSON.stringify(streamSid)},"media":{"payload":"`;
    const carrierCallId = asString(read('call_sid', 'callSid'));
    return {
      type: 'start',
      start: { streamId: streamSid, carrierCallId, customParameters, format },
      token,
      reply: [],
    };
  }

  encodeAudio(pcm16k: Int16Array): WireMessage[] {
    if (!this.outbound) return [];
    return base64AudioMessages(this.outbound, this.outbound.push(pcm16k), this.mediaPrefix, '"}}');
  }

  encodeMark(name: string): WireMessage[] {
    if (!this.outbound) return [];
    const out = base64AudioMessages(this.outbound, this.outbound.flush(true), this.mediaPrefix, '"}}');
    out.push(control({ event: 'mark', stream_sid: this.streamSid, mark: { name } }));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control({ event: 'clear', stream_sid: this.streamSid })];
  }

  encodeEnd(): WireMessage[] {
    return [];
  }
}

export function createExotelMedia(ctx: AdapterContext): CarrierMedia {
  const rate = Number(ctx.query.get('sample-rate') ?? ctx.query.get('sample_rate') ?? Number.NaN);
  return new ExotelMedia(Number.isFinite(rate) && isSupportedRate(rate) ? rate : undefined);
}
