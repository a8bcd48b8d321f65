import { JsonStreamMedia } from '../json-stream.ts';
import type { AdapterContext, CarrierEvent, CarrierMedia, MediaFormat } from '../types.ts';
import {
  asNumber,
  asObject,
  asString,
  field,
  type JsonObject,
  parseEncoding,
  parseHeaderList,
  stringMap,
  takeToken,
} from '../wire.ts';

/**
 * Plivo audio streams (`<Stream bidirectional="true" contentType=...>`). Numbers are real numbers here, but
 * strings are accepted too. In: `start` (call and stream ids, `mediaFormat`, `extra_headers` as `k=v;k2=v2`
 * with our token), `media` (base64; `timestamp` is epoch ms), `dtmf`, `playedStream` (or `played`) echoing a
 * checkpoint, `clearedAudio`. There is no `stop`: the socket closes.
 * Out: `playAudio` in the stream's own content type and rate (L16 8/16 kHz, little-endian, or mu-law 8 kHz),
 * in 20 ms chunks; `checkpoint` with a name; `clearAudio`.
 */

const PLIVO_RATES: readonly number[] = [8000, 16000];

export class PlivoMedia extends JsonStreamMedia {
  readonly carrier = 'plivo' as const;
  private streamId = '';

  protected carrierMessage(msg: JsonObject): CarrierEvent {
    switch (msg.event) {
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

  protected parseStart(msg: JsonObject): CarrierEvent {
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
    const contentType = encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16';
    this.begin(
      format,
      format,
      sampleRate / 50,
      `{"event":"playAudio","streamId":${JSON.stringify(streamId)},"media":` +
        `{"contentType":"${contentType}","sampleRate":${sampleRate},"payload":"`,
    );
    const carrierCallId = asString(read('callId', 'call_id', 'callUUID'));
    return { type: 'start', start: { streamId, carrierCallId, customParameters, format }, token, reply: [] };
  }

  protected markMessage(name: string): JsonObject {
    return { event: 'checkpoint', streamId: this.streamId, name };
  }

  protected clearMessage(): JsonObject {
    return { event: 'clearAudio', streamId: this.streamId };
  }
}

export function createPlivoMedia(_ctx: AdapterContext): CarrierMedia {
  return new PlivoMedia();
}
