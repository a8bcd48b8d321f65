import { samplePeak } from '../codecs/index.ts';
import type { BadMessageReason } from './carriers/types.ts';

/**
 * Per-stream audio-quality telemetry: plain numbers updated on the hot path, read into the stream's summary
 * and added to the gateway's Prometheus counters (see metrics.ts) as deltas once a second and at stream end.
 *
 * Inbound timing: when the carrier stamps its media (Twilio, Exotel: ms since stream start; Plivo: epoch ms),
 * a timestamp ahead of where the previous message ended is a gap (lost or withheld audio), and a message whose
 * arrival lags its timestamp by more than LATE_AFTER_MS beyond the best lag seen so far is late (network or
 * carrier jitter the receiver must absorb). Without timestamps (Vonage, browser) the media clock is the sum of
 * the durations received; a pause in arrivals longer than ARRIVAL_GAP_MS counts as a gap and restarts the clock.
 */

/** A timestamp this far past the expected one is a gap (carriers' ms rounding stays well below). */
export const GAP_TOLERANCE_MS = 10;
/** Lag beyond the best seen that makes a message late: about what a carrier's jitter buffer hides. */
export const LATE_AFTER_MS = 60;
/** Without timestamps, a silence of arrivals this long is a gap. */
export const ARRIVAL_GAP_MS = 200;
/** Outbound audio arriving this long after the previous audio ran out (mid-utterance) is an underrun. */
export const UNDERRUN_TOLERANCE_MS = 20;

export interface InboundStats {
  messages: number;
  bytes: number;
  frames: number;
  audioMs: number;
  gaps: number;
  gapMs: number;
  lateFrames: number;
  maxLateMs: number;
  clippedSamples: number;
  peak: number;
  dtmf: number;
  badMessages: number;
  bad: Partial<Record<BadMessageReason, number>>;
  rateLimited: number;
}

export interface OutboundStats {
  messages: number;
  audioMessages: number;
  audioMs: number;
  marks: number;
  acks: number;
  droppedAcks: number;
  clears: number;
  underruns: number;
  backpressureEvents: number;
  droppedMessages: number;
}

/**
 * The figures of an ended stream an operator reads in its log line: how much audio went each way and the
 * counts that mean trouble. Everything else stays in `/metrics` (per carrier) and the gateway's stream stats.
 */
export interface StreamEndFigures {
  in_audio_ms: number;
  out_audio_ms: number;
  gaps: number;
  late_frames: number;
  underruns: number;
  bad_messages: number;
  dropped_messages: number;
}

export function streamEndFigures(inbound: InboundStats, outbound: OutboundStats): StreamEndFigures {
  return {
    in_audio_ms: Math.round(inbound.audioMs),
    out_audio_ms: Math.round(outbound.audioMs),
    gaps: inbound.gaps,
    late_frames: inbound.lateFrames,
    underruns: outbound.underruns,
    bad_messages: inbound.badMessages,
    dropped_messages: outbound.droppedMessages,
  };
}

export class StreamTelemetry {
  readonly inbound: InboundStats = {
    messages: 0,
    bytes: 0,
    frames: 0,
    audioMs: 0,
    gaps: 0,
    gapMs: 0,
    lateFrames: 0,
    maxLateMs: 0,
    clippedSamples: 0,
    peak: 0,
    dtmf: 0,
    badMessages: 0,
    bad: {},
    rateLimited: 0,
  };
  readonly outbound: OutboundStats = {
    messages: 0,
    audioMessages: 0,
    audioMs: 0,
    marks: 0,
    acks: 0,
    droppedAcks: 0,
    clears: 0,
    underruns: 0,
    backpressureEvents: 0,
    droppedMessages: 0,
  };

  // inbound media clock
  private started = false;
  private prevTimestamp = 0;
  private prevDuration = 0;
  private prevChunk: number | undefined;
  private prevArrival = 0;
  private mediaClock = 0;
  private bestLag = 0;

  // outbound playout model
  private playoutEnd = 0;
  private utterance = false;

  message(bytes: number): void {
    this.inbound.messages++;
    this.inbound.bytes += bytes;
  }

  bad(reason: BadMessageReason): void {
    this.inbound.badMessages++;
    this.inbound.bad[reason] = (this.inbound.bad[reason] ?? 0) + 1;
  }

  /** One inbound audio message: `arrivalMs` on a monotonic clock. */
  audio(
    arrivalMs: number,
    durationMs: number,
    timestampMs: number | undefined,
    chunk: number | undefined,
  ): void {
    const s = this.inbound;
    s.audioMs += durationMs;
    let mediaTime: number;
    if (timestampMs !== undefined) {
      if (this.started) {
        const expected = this.prevTimestamp + this.prevDuration;
        if (timestampMs - expected > GAP_TOLERANCE_MS) this.gap(timestampMs - expected);
      }
      mediaTime = timestampMs;
      this.prevTimestamp = timestampMs;
    } else {
      if (this.started) {
        const silence = arrivalMs - this.prevArrival;
        if (silence > ARRIVAL_GAP_MS) {
          this.gap(silence);
          this.mediaClock = arrivalMs - this.bestLag;
        } else if (chunk !== undefined && this.prevChunk !== undefined && chunk > this.prevChunk + 1) {
          this.gap((chunk - this.prevChunk - 1) * durationMs);
        }
      }
      mediaTime = this.mediaClock;
      this.mediaClock += durationMs;
    }
    const lag = arrivalMs - mediaTime;
    if (!this.started || lag < this.bestLag) this.bestLag = lag;
    const late = lag - this.bestLag;
    if (late > LATE_AFTER_MS) {
      s.lateFrames += Math.max(1, Math.round(durationMs / 20));
      if (late > s.maxLateMs) s.maxLateMs = Math.round(late);
    }
    this.started = true;
    this.prevDuration = durationMs;
    this.prevChunk = chunk;
    this.prevArrival = arrivalMs;
  }

  /** One canonical inbound frame (after decode): peak and clipping. */
  frame(frame: Int16Array): void {
    // Peak and clipping only (no RMS, no logarithm): this runs for every frame of every stream. Clipped samples
    // are counted only in a frame that reaches full scale.
    const peak = samplePeak(frame);
    if (peak > this.inbound.peak) this.inbound.peak = peak;
    if (peak >= 32767) this.inbound.clippedSamples += clippedSamples(frame);
    this.inbound.frames++;
  }

  /** An outbound audio message left for the peer at `nowMs` (monotonic). */
  audioSent(nowMs: number, audioMs: number): void {
    const o = this.outbound;
    if (this.utterance && nowMs > this.playoutEnd + UNDERRUN_TOLERANCE_MS) o.underruns++;
    this.playoutEnd = Math.max(this.playoutEnd, nowMs) + audioMs;
    this.utterance = true;
    o.audioMessages++;
    o.audioMs += audioMs;
  }

  /** A mark ends an utterance: silence after it is intended, not an underrun. */
  markSent(): void {
    this.outbound.marks++;
    this.utterance = false;
  }

  cleared(nowMs: number): void {
    this.outbound.clears++;
    this.utterance = false;
    this.playoutEnd = nowMs;
  }

  /** Audio sent but (by the playout estimate) not yet played. */
  queuedMs(nowMs: number): number {
    return Math.max(0, this.playoutEnd - nowMs);
  }

  private gap(ms: number): void {
    this.inbound.gaps++;
    this.inbound.gapMs += Math.round(ms);
  }
}

/** Samples at full scale (magnitude 32767 or more). */
function clippedSamples(frame: Int16Array): number {
  let clipped = 0;
  for (let i = 0; i < frame.length; i++) {
    const s = frame[i]!;
    if (s >= 32767 || s <= -32767) clipped++;
  }
  return clipped;
}
