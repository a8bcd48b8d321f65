import type { StreamEvent } from '../media-handler.ts';

/**
 * One interface for every media protocol the gateway speaks (docs/architecture.md, "Carriers and engines"). An adapter is a
 * serializer for one stream: it turns each WebSocket message of its carrier into canonical events, and turns
 * agent audio, marks and clears into that carrier's exact messages. It does no I/O, keeps no timers and never
 * throws on input: anything it cannot read becomes a `bad` event that the session counts.
 *
 * Canonical audio is PCM16 mono 16 kHz in 20 ms frames of exactly 320 samples; adapters decode and resample
 * at the edge, in both directions.
 */

export type CarrierName = 'twilio' | 'exotel' | 'plivo' | 'vonage' | 'web';
export const CARRIER_NAMES: readonly CarrierName[] = ['twilio', 'exotel', 'plivo', 'vonage', 'web'];

export type AudioEncoding = 'mulaw' | 'alaw' | 'pcm16' | 'opus';

/** The carrier side's audio: codec, sample rate, channels (always mono here). */
export interface MediaFormat {
  readonly encoding: AudioEncoding;
  readonly sampleRate: number;
  readonly channels: 1;
}

export interface StreamStart {
  /** The carrier's stream id, or one we made up when the protocol has none (Vonage, browser). */
  readonly streamId: string;
  /** The carrier's own call id (Twilio `callSid`, Plivo `callId`, Vonage `uuid` header), when it gives one. */
  readonly carrierCallId: string | undefined;
  /** Custom parameters / extra headers, with the stream token removed. */
  readonly customParameters: Readonly<Record<string, string>>;
  readonly format: MediaFormat;
}

export type BadMessageReason =
  | 'malformed'
  | 'unknown_event'
  | 'media_before_start'
  | 'bad_payload'
  | 'oversized'
  | 'unexpected_binary'
  | 'unexpected_text';

export type CarrierEvent =
  | {
      readonly type: 'start';
      readonly start: StreamStart;
      /** The token carried inside the protocol (custom parameters, extra headers), if any. */
      readonly token: string | undefined;
      /** Messages to send once the stream is authorized (the browser's `ready`). */
      readonly reply: readonly WireMessage[];
    }
  | {
      readonly type: 'audio';
      /** Whole 320-sample frames completed by this message (zero or more); fresh arrays the receiver owns. */
      readonly frames: Int16Array[];
      /** Duration of the audio this message carried, at the carrier's rate. */
      readonly durationMs: number;
      /** The carrier's media timestamp in ms (stream-relative or epoch), when it sends one. */
      readonly timestampMs: number | undefined;
      /** The carrier's chunk counter, when it sends one. */
      readonly chunk: number | undefined;
    }
  | { readonly type: 'dtmf'; readonly digit: string; readonly durationMs: number | undefined }
  | { readonly type: 'playback_ack'; readonly name: string }
  | { readonly type: 'cleared' }
  | { readonly type: 'stop'; readonly reason: string | undefined }
  | { readonly type: 'ignored' }
  | { readonly type: 'unsupported_format'; readonly detail: string }
  | { readonly type: 'bad'; readonly reason: BadMessageReason };

/** One WebSocket message to send. `audioMs` is the audio it carries (0 for control messages). */
export interface WireMessage {
  readonly data: string | Uint8Array;
  readonly binary: boolean;
  readonly audioMs: number;
}

export type CarrierEventSink = (event: CarrierEvent) => void;

export interface CarrierMedia {
  readonly carrier: CarrierName;
  /**
   * True when outbound audio must be sent in real time, one message per `audioMs` (Vonage plays what arrives
   * and has no deep buffer); false when the carrier buffers and plays in order (Twilio, Exotel, Plivo, browser).
   */
  readonly pacedOutput: boolean;
  /** Read one WebSocket message. `data` is only valid during the call. Emits zero or more events. */
  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void;
  /** Agent audio, PCM16 16 kHz of any length; returns the carrier messages that are complete so far. */
  encodeAudio(pcm16k: Int16Array): WireMessage[];
  /** Flushes the audio held back for chunking, then the carrier's playback marker (mark, checkpoint, notify). */
  encodeMark(name: string): WireMessage[];
  /** Drops audio held back and returns the carrier's flush message. */
  encodeClear(): WireMessage[];
  /** Messages to send before the gateway closes the stream itself (the browser's `bye`); usually none. */
  encodeEnd(reason: string): WireMessage[];
  /** A message about the call for the client (the browser's events); carriers without one leave this out. */
  encodeEvent?(event: StreamEvent): WireMessage[];
}

/** What an adapter learns from the HTTP upgrade request. */
export interface AdapterContext {
  /** The URL query string, without `?`, already stripped of `token`. */
  readonly query: URLSearchParams;
  /** The call id named in the path (`/web/{call_id}`), if the route has one. */
  readonly pathCallId: string | undefined;
  /** A fresh stream id for protocols that have none. */
  newStreamId(): string;
}

export type CarrierMediaFactory = (ctx: AdapterContext) => CarrierMedia;
