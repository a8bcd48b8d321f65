import { audioEvent, encoderFor, InboundAudio, OutboundAudio } from '../audio-edges.ts';
import type {
  AdapterContext,
  CarrierEvent,
  CarrierEventSink,
  CarrierMedia,
  MediaFormat,
  WireMessage,
} from '../types.ts';
import {
  asNumber,
  asObject,
  asString,
  control,
  field,
  type JsonObject,
  parseJsonObject,
  rateFromContentType,
  takeToken,
} from '../wire.ts';

/**
 * Vonage voice WebSocket (NCCO `connect` to a `websocket` endpoint). The first text message is
 * `{"event":"websocket:connected","content-type":"audio/l16;rate=16000", ...}` with the NCCO's `headers`
 * flattened into it (our token may be among them, or in the URL query). Audio both ways is binary frames of
 * 16-bit little-endian linear PCM of exactly 20 ms (320 bytes at 8 kHz, 640 at 16 kHz); Vonage plays what
 * arrives, so outbound frames are paced in real time by the session (`pacedOutput`), and the last frame before
 * a notify is padded with silence. Text frames: `websocket:dtmf`, `websocket:notify` (our notify echoed once
 * the audio before it played), `websocket:cleared`. Out: `{"action":"notify","payload":{"name":...}}`,
 * `{"action":"clear"}`. There is no stream id and no stop: the socket closes.
 */

const VONAGE_RATES: readonly number[] = [8000, 16000];
/** Fields of `websocket:connected` that are protocol, not the NCCO's headers. */
const PROTOCOL_FIELDS = new Set(['event', 'content-type', 'contentType']);

export class VonageMedia implements CarrierMedia {
  readonly carrier = 'vonage' as const;
  readonly pacedOutput = true;
  private inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;

  constructor(private readonly newStreamId: () => string) {}

  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void {
    emit(this.read(data, isBinary));
  }

  private read(data: Uint8Array, isBinary: boolean): CarrierEvent {
    if (isBinary) {
      if (!this.inbound) return { type: 'bad', reason: 'media_before_start' };
      return audioEvent(this.inbound, data, undefined, undefined);
    }
    const msg = parseJsonObject(data);
    if (!msg) return { type: 'bad', reason: 'malformed' };
    switch (msg.event) {
      case 'websocket:connected':
        return this.parseConnected(msg);
      case 'websocket:dtmf': {
        const dtmf = asObject(msg.dtmf) ?? msg;
        const digit = asString(field(dtmf, 'digit', 'digits'));
        if (!digit) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'dtmf', digit, durationMs: asNumber(field(dtmf, 'duration')) };
      }
      case 'websocket:notify': {
        const name = asString(field(asObject(msg.payload), 'name'));
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'websocket:cleared':
        return { type: 'cleared' };
      case 'websocket:error':
        return { type: 'ignored' };
      default:
        return { type: 'bad', reason: 'unknown_event' };
    }
  }

  private parseConnected(msg: JsonObject): CarrierEvent {
    const contentType = asString(field(msg, 'content-type', 'contentType'));
    const sampleRate = rateFromContentType(contentType) ?? 16000;
    if ((contentType !== undefined && !/l16/i.test(contentType)) || !VONAGE_RATES.includes(sampleRate)) {
      return { type: 'unsupported_format', detail: `${contentType}` };
    }
    const format: MediaFormat = { encoding: 'pcm16', sampleRate, channels: 1 };
    const customParameters: Record<string, string> = {};
    for (const [key, value] of Object.entries(msg)) {
      if (PROTOCOL_FIELDS.has(key)) continue;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        customParameters[key] = String(value);
      }
    }
    const token = takeToken(customParameters);
    this.inbound = new InboundAudio(format);
    this.outbound = new OutboundAudio(format, sampleRate / 50, encoderFor('pcm16')!);
    const carrierCallId =
      customParameters.uuid ?? customParameters.call_uuid ?? customParameters.conversation_uuid;
    const streamId = this.newStreamId();
    return { type: 'start', start: { streamId, carrierCallId, customParameters, format }, token, reply: [] };
  }

  encodeAudio(pcm16k: Int16Array): WireMessage[] {
    if (!this.outbound) return [];
    return this.frames(this.outbound.push(pcm16k));
  }

  encodeMark(name: string): WireMessage[] {
    if (!this.outbound) return [];
    const out = this.frames(this.outbound.flush(true));
    out.push(control({ action: 'notify', payload: { name } }));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control({ action: 'clear' })];
  }

  encodeEnd(): WireMessage[] {
    return [];
  }

  private frames(chunks: Uint8Array[]): WireMessage[] {
    const out: WireMessage[] = new Array(chunks.length);
    for (let i = 0; i < chunks.length; i++) out[i] = { data: chunks[i]!, binary: true, audioMs: 20 };
    return out;
  }
}

export function createVonageMedia(ctx: AdapterContext): CarrierMedia {
  return new VonageMedia(ctx.newStreamId);
}
