import {
  asNumber,
  asObject,
  asString,
  audioEvent,
  base64AudioMessages,
  control,
  decodeBase64,
  encoderFor,
  field,
  InboundAudio,
  type JsonObject,
  OutboundAudio,
  parseEncoding,
  parseHeaderList,
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
 * Plivo audio streams (`<Stream bidirectional="true" contentType=...>`). Numbers are real numbers here, but
 * strings are accepted too. In: `start` (call and stream ids, `mediaFormat`, `extra_headers` as `k=v;k2=v2`
 * with our token), `media` (base64; `timestamp` is epoch ms), `dtmf`, `playedStream` (or `played`) echoing a
 * checkpoint, `clearedAudio`. There is no `stop`: the socket closes.
 * Out: `playAudio` in the stream's own content type and rate (L16 8/16 kHz, little-endian, or mu-law 8 kHz),
 * in 20 ms chunks; `checkpoint` with a name; `clearAudio`.
 */

const PLIVO_RATES: readonly number[] = [8000, 16000];

export class PlivoMedia implements CarrierMedia {
  readonly carrier = 'plivo' as const;
  readonly pacedOutput = false;
  private streamId = '';
  private inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;
  private playPrefix = '';

  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void {
    emit(this.read(data, isBinary));
  }

  private read(data: Uint8Array, isBinary: boolean): CarrierEvent {
    if (isBinary) return { type: 'bad', reason: 'unexpected_binary' };
    const msg = parseJsonObject(data);
    if (!msg) return { type: 'bad', reason: 'malformed' };
    switch (msg.event) {
      case 'start':
        return this.parseStart(msg);
      case 'media': {
        if (!this.inbound) return { type: 'bad', reason: 'media_before_start' };
        const media = asObject(msg.media);
        const track = asString(field(media, 'track'));
        if (track !== undefined && !track.startsWith('inbound')) return { type: 'ignored' };
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
      case 'playedStream':
      case 'played': {
        const name = asString(msg.name) ?? asString(field(asObject(msg.checkpoint), 'name'));
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'clearedAudio':
        return { type: 'cleared' };
      case 'stop':
        return { type: 'stop', reason: asString(msg.reason) };
      default:
        return { type: 'bad', reason: 'unknown_event' };
    }
  }

  private parseStart(msg: JsonObject): CarrierEvent {
    const start = asObject(msg.start) ?? {};
    const read = (...keys: string[]): unknown => field(start, ...keys) ?? field(msg, ...keys);
    const streamId = asString(read('streamId', 'stream_id'));
    if (!streamId) return { type: 'bad', reason: 'bad_payload' };
    const mediaFormat = asObject(read('mediaFormat', 'media_format'));
    const encodingText = asString(field(mediaFormat, 'encoding'));
    // Plivo's default content type is audio/x-l16;rate=8000.
    const encoding = encodingText === undefined ? 'pcm16' : parseEncoding(encodingText);
    const sampleRate = asNumber(field(mediaFormat, 'sampleRate', 'sample_rate')) ?? 8000;
    const supported =
      encoding === 'mulaw' ? sampleRate === 8000 : encoding === 'pcm16' && PLIVO_RATES.includes(sampleRate);
    if (!encoding || !supported) {
      return { type: 'unsupported_format', detail: `${encodingText} ${sampleRate} Hz` };
    }
    const format: MediaFormat = { encoding, sampleRate, channels: 1 };
    const headers = read('extra_headers', 'extraHeaders');
    const customParameters = typeof headers === 'string' ? parseHeaderList(headers) : stringMap(headers);
    const token = takeToken(customParameters);
    this.streamId = streamId;
    this.inbound = new InboundAudio(format);
    this.outbound = new OutboundAudio(format, sampleRate / 50, encoderFor(encoding)!);
    const contentType = encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16';
    this.playPrefix =
      `{"event":"playAudio","streamId":${JSON.stringify(streamId)},"media":` +
      `{"contentType":"${contentType}","sampleRate":${sampleRate},"payload":"`;
    const carrierCallId = asString(read('callId', 'call_id', 'callUUID'));
    return { type: 'start', start: { streamId, carrierCallId, customParameters, format }, token, reply: [] };
  }

  encodeAudio(pcm16k: Int16Array): WireMessage[] {
    if (!this.outbound) return [];
    return base64AudioMessages(this.outbound, this.outbound.push(pcm16k), this.playPrefix, '"}}');
  }

  encodeMark(name: string): WireMessage[] {
    if (!this.outbound) return [];
    const out = base64AudioMessages(this.outbound, this.outbound.flush(false), this.playPrefix, '"}}');
    out.push(control({ event: 'checkpoint', streamId: this.streamId, name }));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control({ event: 'clearAudio', streamId: this.streamId })];
  }

  encodeEnd(): WireMessage[] {
    return [];
  }
}

export function createPlivoMedia(_ctx: AdapterContext): CarrierMedia {
  return new PlivoMedia();
}
