import { isSupportedRate } from '../audio-edges.ts';
import { TwilioProtocolMedia } from '../twilio-protocol.ts';
import type { AdapterContext, CarrierEvent, CarrierMedia, MediaFormat } from '../types.ts';
import { asNumber, asObject, asString, field, type JsonObject, parseEncoding, stringMap } from '../wire.ts';

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

export class TwilioMedia extends TwilioProtocolMedia {
  readonly carrier = 'twilio' as const;
  protected override readonly streamSidKey = 'streamSid';

  protected parseStart(msg: JsonObject): CarrierEvent {
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
    const carrierCallId = asString(field(start, 'callSid', 'call_sid'));
    return this.started(
      streamSid,
      format,
      OUTBOUND_FORMAT,
      OUTBOUND_CHUNK_SAMPLES,
      carrierCallId,
      customParameters,
    );
  }
}

export function createTwilioMedia(_ctx: AdapterContext): CarrierMedia {
  return new TwilioMedia();
}
