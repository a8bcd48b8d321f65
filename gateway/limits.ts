import type { CarrierName } from './carriers/types.ts';
import type { BackpressureLimits } from './outbound.ts';

/** Every limit of the gateway, with its default and why. Tests and the composition root may override them. */

export interface StreamLimits extends BackpressureLimits {
  /** A stream that has not sent its start (hello, connected) by then is closed (slowloris). */
  readonly startTimeoutMs: number;
  /** Unreadable messages tolerated before the stream is closed. */
  readonly maxBadMessages: number;
  /** Inbound rate cap, a token bucket per stream: messages per second and burst (20 ms frames are 50/s). */
  readonly messagesPerSec: number;
  readonly messageBurst: number;
  /** The same for bytes. */
  readonly bytesPerSec: number;
  readonly byteBurst: number;
  /** Messages skipped by the rate cap before the stream is closed as a flood. */
  readonly floodCloseAfter: number;
  /** Events held while the token is being checked. */
  readonly maxPendingEvents: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  startTimeoutMs: 10_000,
  maxBadMessages: 50,
  messagesPerSec: 150,
  messageBurst: 250,
  bytesPerSec: 512 * 1024,
  byteBurst: 1024 * 1024,
  floodCloseAfter: 500,
  maxPendingEvents: 250,
  highWaterBytes: 256 * 1024,
  lowWaterBytes: 64 * 1024,
  closeAfterMs: 15_000,
  maxQueuedAudioMs: 120_000,
};

export interface RouteLimits {
  readonly maxPayloadLength: number;
  readonly idleTimeoutS: number;
}

export interface GatewayLimits extends StreamLimits {
  readonly routes: Readonly<Record<CarrierName, RouteLimits>>;
  /** uWS drops sends beyond this much buffered per socket (send answers 2); our own watermarks act first. */
  readonly maxBackpressureBytes: number;
  /** Period of the start-timeout / backpressure / metrics sweep. */
  readonly housekeepingMs: number;
  /** Ended streams kept for `stats().recent`. */
  readonly recentStreams: number;
}

export const DEFAULT_GATEWAY_LIMITS: GatewayLimits = {
  ...DEFAULT_STREAM_LIMITS,
  routes: {
    // A 20 ms Twilio media message is ~300 bytes; start messages with custom parameters stay within a few KB.
    twilio: { maxPayloadLength: 64 * 1024, idleTimeoutS: 16 },
    // Exotel may send up to 100 KB chunks, base64 in JSON.
    exotel: { maxPayloadLength: 160 * 1024, idleTimeoutS: 16 },
    plivo: { maxPayloadLength: 64 * 1024, idleTimeoutS: 16 },
    // 640-byte frames; the connected message carries up to 512 bytes of headers.
    vonage: { maxPayloadLength: 16 * 1024, idleTimeoutS: 16 },
    web: { maxPayloadLength: 16 * 1024, idleTimeoutS: 32 },
  },
  maxBackpressureBytes: 1024 * 1024,
  housekeepingMs: 1000,
  recentStreams: 100,
};
