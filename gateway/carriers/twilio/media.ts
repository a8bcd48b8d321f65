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
 * Twilio Media Streams, bidirectional (`<Connect><Stream>`). In: `connected`, `start` (token in
 * `start.customParameters.token`), `media` (base64 mu-law 8 kHz), `dtmf`, `mark` (the echo of ours), `stop`.
 * Out, and nothing else: `media` with base64 raw mu-law 8 kHz, `mark`, `clear`. Outbound audio goes in 20 ms
 * chunks (160 bytes); Twilio buffers and plays in order, so it is not paced here.
 */

/** What Twilio accepts back, whatever the start message says. */
const OUTBOUND_FORMAT: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
/** 20 ms at 8 kHz. */
const OUTBOUND_CHUNK_SAMPLES = 160;

export class TwilioMedia implements CarrierMedia {
  readonly carrier = 'twilio' as const;
  readonly pacedOutput = false;
  private streamSid = '';
  private inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;
  private mediaPrefix = '';

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
        const track = asString(field(media, 'track'));
        if (track !== undefined && !track.startsWith('inbound')) return { type: 'ignored' };
        const timestamp = asNumber(field(media, 'timestamp'));
        const chunk = asNumber(field(media, 'chunk'));
        return audioEvent(this.inbound, decodeBase64(field(media, 'payload')), timestamp, chunk);
      }
      case 'dtmf': {
        const dtmf = asObject(msg.dtmf);
        const digit = asString(field(dtmf, 'digit'));
        if (!digit) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'dtmf', digit, durationMs: asNumber(field(dtmf, 'duration')) };
      }
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
    this.inbound = new InboundAudio(format);
    this.outbound = new OutboundAudio(OUTBOUND_FORMAT, OUTBOUND_CHUNK_SAMPLES, encoderFor('mulaw')!);
    this.mediaPrefix = `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"`;
    const carrierCallId = asString(field(start, 'callSid', 'call_sid'));
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
    const out = base64AudioMessages(this.outbound, this.outbound.flush(false), this.mediaPrefix, '"}}');
    out.push(control({ event: 'mark', streamSid: this.streamSid, mark: { name } }));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control({ event: 'clear', streamSid: this.streamSid })];
  }

  encodeEnd(): WireMessage[] {
    return [];
  }
}

export function createTwilioMedia(_ctx: AdapterContext): CarrierMedia {
  return new TwilioMedia();
}
