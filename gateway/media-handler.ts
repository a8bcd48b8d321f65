import type { Logger } from 'pino';
import type { CarrierName, MediaFormat } from './carriers/types.ts';

/**
 * What a media stream looks like to the rest of the platform: a `MediaHandler` receives canonical events and
 * talks back through a `MediaOutput`. The gateway creates one handler per authorized stream through the
 * `handlerFactory` given to `startGateway`; the pipeline's CallSession attaches here.
 *
 * Audio in both directions is PCM16 mono 16 kHz. Inbound frames are exactly 320 samples (20 ms). Outbound
 * audio may be any length; the carrier adapter resamples, encodes and chunks it.
 */

export interface PlaybackAck {
  /** The name given to `sendMark`. */
  readonly name: string;
  /**
   * True when the audio before the mark was flushed by a `clear` instead of being played (carriers echo pending
   * marks on clear; marks still queued in the gateway are reported dropped at once).
   */
  readonly dropped: boolean;
}

export interface StreamEnd {
  /** `stop` (carrier said so), `bye` (browser), `closed` (peer closed the socket), or a close reason. */
  readonly reason: string;
  /** The WebSocket close code, when the socket closed. */
  readonly closeCode: number | undefined;
}

/**
 * A JSON message about the call for the client on the other end of the stream (the browser: the
 * conversation, the call's state, each turn's latency; gateway/web/PROTOCOL.md). Carriers have no such
 * channel.
 */
export interface StreamEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface MediaOutput {
  /** Agent audio, PCM16 16 kHz, any length. Dropped silently after the stream ended. */
  sendAudio(pcm16k: Int16Array): void;
  /** Sends a playback marker after the audio sent so far; `onPlaybackAck` reports it when played (or dropped). */
  sendMark(name: string): void;
  /** Flushes the carrier's buffer and everything queued here (barge-in). */
  clear(): void;
  /** Ends the media stream from our side (the call's hangup goes through the carrier's REST API). */
  end(reason?: string): void;
  /** Estimated milliseconds of audio sent or queued that have not been played yet. */
  queuedMs(): number;
  /** Tells the client about the call; present only on streams whose protocol has a way to (the browser's). */
  sendEvent?(event: StreamEvent): void;
}

export interface StreamContext {
  readonly carrier: CarrierName;
  /** Our call id, from the verified stream token. */
  readonly callId: string;
  readonly streamId: string;
  readonly carrierCallId: string | undefined;
  /** Custom parameters / extra headers / query parameters, without the token. */
  readonly customParameters: Readonly<Record<string, string>>;
  /** The carrier side's codec and rate (informational: the handler always sees PCM16 16 kHz). */
  readonly format: MediaFormat;
  readonly output: MediaOutput;
  /** A child logger bound to the stream (carrier, call id, stream id). */
  readonly logger: Logger;
  /** Aborted when the stream ends, for whatever reason. */
  readonly signal: AbortSignal;
}

/**
 * Callbacks run on the event loop in message order. A callback that throws (or a returned promise that rejects)
 * ends the stream with close code 4015 `handler_failed`.
 */
export interface MediaHandler {
  onStart?(): void | Promise<void>;
  /** One 20 ms frame (320 samples, 16 kHz); the array is the handler's to keep. */
  onAudio(frame: Int16Array): void;
  onDtmf?(digit: string, durationMs: number | undefined): void;
  onPlaybackAck?(ack: PlaybackAck): void;
  /** The stream ended; called once, after which the output drops everything. */
  onStop?(end: StreamEnd): void | Promise<void>;
}

export type MediaHandlerFactory = (ctx: StreamContext) => MediaHandler;
