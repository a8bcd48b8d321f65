import { isSupportedRate } from '../audio-edges.ts';
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
 * Twilio Media Streams, bidirectional (`<Connect><Stream>`). In: `connected`, `start` (token in
 * `start.customParameters.token`), `media` (base64 mu-law 8 kHz), `dtmf`, `mark` (the echo of ours), `stop`.
 * Out, and nothing else: `media` with base64 raw mu-law 8 kHz, `mark`, `clear`. Outbound audio goes in 20 ms
 * chunks (160 bytes); Twilio buffers and plays in order, so it is not paced here.
 */

/** What Twilio accepts back, whatever the start message says. */
const OUTBOUND_FORMAT: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
/** 20 ms at 8 kHz. */
const OUTBOUND_CHUNK_SAMPLES = 160;

export class TwilioMedia extends JsonStreamMedia {
  readonly carrier = 'twilio' as const;
  private streamSid = '';

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
        const name = asString(field(asObject(msg.mark), 'name'));
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'stop':
        return { type: 'stop', reason: asString(field(asObject(msg.stop), 'reason')) };
      default:
        return { type: 'bad', reason: 'unknown_event' };
    }
  }

  private parseStart(msg: JsonObject): CarrierEvent {
    const start = asObject(msg.start);
    const streamSid = asString(field(msg, 'streamSid', 'stream_sid')) ?? asString(field(start, 'streamSid'));
    if (!start || !streamSid) return { type: 'bad', reason: 'bad_payload' };
    const mediaFormat = asObject(field(start, 'mediaFormat', 'media_format'));
    const encodingText = asString(field(mediaFormat, 'encoding'));
    const encoding = encodingText === undefined ? 'mulaw' : parseEncoding(encodingText);
    const sampleRate = asNumber(field(mediaFormat, 'sampleRate', 'sample_rate')) ?? 8000;
    const channels = asNumber(field(mediaFormat, 'channels')) ?? 1;
    if (!encoding || encoding === 'opus' || !isSupportedRate(sampleRate) || channels !== 1) {
      return { type: 'unsupported_format', detail: `${encodingText} ${sampleRate} Hz x${channels}` };
    }
    const format: MediaFormat = { encoding, sampleRate, channels: 1 };
    const customParameters = stringMap(field(start, 'customParameters', 'custom_parameters'));
    const token = takeToken(customParameters);
    this.streamSid = streamSid;
    this.begin(
      format,
      OUTBOUND_FORMAT,
      OUTBOUND_CHUNK_SAMPLES,
      `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"`,
    );
    const carrierCallId = asString(field(start, 'callSid', 'call_sid'));
    return {
      type: 'start',
      start: { streamId: streamSid, carrierCallId, customParameters, format },
      token,
      reply: [],
    };
  }

  protected markMessage(name: string): JsonObject {
    return { event: 'mark', streamSid: this.streamSid, mark: { name } };
  }

  protected clearMessage(): JsonObject {
    return { event: 'clear', streamSid: this.streamSid };
  }
}

export function createTwilioMedia(_ctx: AdapterContext): CarrierMedia {
  return new TwilioMedia();
}
