import { audioEvent, base64AudioMessages, encoderFor, InboundAudio, OutboundAudio } from './audio-edges.ts';
import { MediaMessageScanner, type ScannedMedia } from './media-message-scan.ts';
import type {
  CarrierEvent,
  CarrierEventSink,
  CarrierMedia,
  CarrierName,
  MediaFormat,
  WireMessage,
} from './types.ts';
import {
  asNumber,
  asObject,
  asString,
  Base64Decoder,
  control,
  field,
  type JsonObject,
  parseJsonObject,
} from './wire.ts';

/**
 * What Twilio, Exotel and Plivo media streams share: JSON text messages only, base64 audio inside a `media`
 * object, DTMF in a `dtmf` object or at the top level, and outbound audio as one JSON message per chunk with
 * the payload between a fixed prefix and suffix (built once per stream, so each chunk costs a base64 encode
 * and a concatenation, not a JSON.stringify). Media messages of the usual shape are read from the bytes
 * (media-message-scan.ts), everything else through JSON.parse. Each carrier supplies how its messages map to
 * events, its mark and clear messages, and its outbound format and chunking once the stream has started.
 */

/**
 * Every call runs to completion before the next, so one scanner serves all streams, and one payload decoder
 * (its bytes are decoded to samples at once).
 */
const mediaScanner = new MediaMessageScanner();
const payloads = new Base64Decoder();
export abstract class JsonStreamMedia implements CarrierMedia {
  abstract readonly carrier: CarrierName;
  readonly pacedOutput = false;
  protected inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;
  private audioPrefix = '';
  /** Pad the last chunk before a mark to a whole chunk, for carriers that take only whole chunks (Exotel). */
  protected readonly padBeforeMark: boolean = false;
  /** Media of other tracks than the inbound one is ignored (carriers whose media names no track say false). */
  protected readonly mediaTracks: boolean = true;

  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void {
    if (isBinary) {
      emit({ type: 'bad', reason: 'unexpected_binary' });
      return;
    }
    if (mediaScanner.scan(data)) {
      emit(this.mediaFields(mediaScanner.fields));
      return;
    }
    const msg = parseJsonObject(data);
    emit(msg ? this.readMessage(msg) : { type: 'bad', reason: 'malformed' });
  }

  /** One parsed message as a canonical event: the events every JSON stream protocol has, then the carrier's. */
  private readMessage(msg: JsonObject): CarrierEvent {
    switch (msg.event) {
      case 'start':
        return this.parseStart(msg);
      case 'media':
        return this.mediaAudio(msg);
      case 'dtmf':
        return this.dtmf(msg);
      default:
        return this.carrierMessage(msg);
    }
  }

  /** The `start` message: a `started` stream, or why not. */
  protected abstract parseStart(msg: JsonObject): CarrierEvent;
  /** A message other than `start`, `media` and `dtmf`: the carrier's own events. */
  protected abstract carrierMessage(msg: JsonObject): CarrierEvent;
  /** The carrier's mark (checkpoint) message. */
  protected abstract markMessage(name: string): JsonObject;
  /** The carrier's flush of the audio it buffered. */
  protected abstract clearMessage(): JsonObject;

  /** A valid start: the audio edges both ways and the JSON around outbound payloads. */
  protected begin(
    inbound: MediaFormat,
    outbound: MediaFormat,
    chunkSamples: number,
    audioMessagePrefix: string,
  ): void {
    const encoder = encoderFor(outbound.encoding);
    if (!encoder) throw new Error(`no encoder for ${outbound.encoding}`);
    this.inbound = new InboundAudio(inbound);
    this.outbound = new OutboundAudio(outbound, chunkSamples, encoder);
    this.audioPrefix = audioMessagePrefix;
  }

  /** `{"event":"media","media":{"payload":...}}`. */
  protected mediaAudio(msg: JsonObject): CarrierEvent {
    const media = asObject(msg.media);
    return this.mediaFields({
      track: field(media, 'track'),
      timestamp: field(media, 'timestamp'),
      chunk: field(media, 'chunk'),
      payload: field(media, 'payload'),
    });
  }

  /** A media message's fields, however they were read. */
  private mediaFields(media: { [K in keyof ScannedMedia]: unknown }): CarrierEvent {
    if (!this.inbound) return { type: 'bad', reason: 'media_before_start' };
    const track = this.mediaTracks ? asString(media.track) : undefined;
    if (track !== undefined && !track.startsWith('inbound')) return { type: 'ignored' };
    const timestamp = asNumber(media.timestamp);
    const chunk = asNumber(media.chunk);
    return audioEvent(this.inbound, payloads.decode(media.payload), timestamp, chunk);
  }

  /** `{"event":"dtmf","dtmf":{"digit":...}}`, or the digit at the top level. */
  protected dtmf(msg: JsonObject): CarrierEvent {
    const dtmf = asObject(msg.dtmf) ?? msg;
    const digit = asString(field(dtmf, 'digit', 'digits'));
    if (!digit) return { type: 'bad', reason: 'bad_payload' };
    return { type: 'dtmf', digit, durationMs: asNumber(field(dtmf, 'duration')) };
  }

  encodeAudio(pcm16k: Int16Array): WireMessage[] {
    if (!this.outbound) return [];
    return this.outbound.base64Messages(pcm16k, this.audioPrefix, '"}}');
  }

  encodeMark(name: string): WireMessage[] {
    if (!this.outbound) return [];
    const chunks = this.outbound.flush(this.padBeforeMark);
    const out = base64AudioMessages(this.outbound, chunks, this.audioPrefix, '"}}');
    out.push(control(this.markMessage(name)));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control(this.clearMessage())];
  }

  encodeEnd(): WireMessage[] {
    return [];
  }
}
