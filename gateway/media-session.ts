import type { Logger } from 'pino';
import { type Clock, isoTime } from '../core/clock.ts';
import type { CarrierEvent, CarrierMedia, CarrierName, MediaFormat, StreamStart } from './carriers/types.ts';
import { CLOSE, type CloseReason, closeReasonForToken } from './close-codes.ts';
import type { StreamLimits } from './limits.ts';
import type {
  MediaHandler,
  MediaHandlerFactory,
  MediaOutput,
  PlaybackAck,
  StreamContext,
  StreamEvent,
} from './media-handler.ts';
import { type GatewayMetrics, type MetricsCursor, newMetricsCursor } from './metrics.ts';
import { OutboundPath } from './outbound.ts';
import type { Pacer } from './pacer.ts';
import { type InboundStats, type OutboundStats, StreamTelemetry, streamEndFigures } from './telemetry.ts';
import type { StreamTokens, TokenRejection, TokenVerdict } from './tokens.ts';
import type { StreamTransport } from './transport.ts';

/**
 * One media stream: owns the carrier adapter, authorizes the stream token, turns the adapter's events into
 * `MediaHandler` calls, and gives the handler its output. States: awaiting_start -> authorizing -> live ->
 * ended (any state can end). Bad input never throws out of here: it is skipped and counted, and a stream that
 * keeps misbehaving is closed with a documented code (close-codes.ts).
 */

export type StreamState = 'awaiting_start' | 'authorizing' | 'live' | 'ended';

export interface StreamSummary {
  readonly carrier: CarrierName;
  readonly state: StreamState;
  readonly callId: string | undefined;
  readonly streamId: string | undefined;
  readonly carrierCallId: string | undefined;
  readonly format: MediaFormat | undefined;
  readonly openedAt: string;
  readonly endedAt: string | undefined;
  readonly durationMs: number;
  readonly endReason: string | undefined;
  readonly closeCode: number | undefined;
  readonly inbound: Readonly<InboundStats>;
  readonly outbound: Readonly<OutboundStats>;
}

export interface MediaSessionOptions {
  readonly carrier: CarrierName;
  readonly adapter: CarrierMedia;
  readonly transport: StreamTransport;
  readonly tokens: StreamTokens;
  readonly handlerFactory: MediaHandlerFactory;
  readonly metrics: GatewayMetrics;
  readonly pacer: Pacer;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly limits: StreamLimits;
  /** The verdict on a token that came in the URL query (checked during the upgrade), if one did. */
  readonly urlToken: TokenVerdict | undefined;
  /** How the call ended, told to the client before a refused URL token closes the stream. */
  readonly endedCall?: StreamEvent | undefined;
  /** The call id the URL names (`/web/{call_id}` or a `call_id` query parameter), if any. */
  readonly statedCallId: string | undefined;
  readonly onEnd: (session: MediaSession) => void;
}

interface Pending {
  readonly event: CarrierEvent;
  readonly arrival: number;
}

export class MediaSession {
  readonly telemetry = new StreamTelemetry();
  readonly metricsCursor: MetricsCursor = newMetricsCursor();
  private state: StreamState = 'awaiting_start';
  private readonly openedAt: number;
  private readonly openedMono = performance.now();
  private endedAt: number | undefined;
  private endReason: string | undefined;
  /** Bounded label for the closed-streams counter: our close reason, or `peer_closed`. */
  private closeLabel: CloseReason | 'peer_closed' = 'peer_closed';
  private closeCode: number | undefined;
  private start: StreamStart | undefined;
  private callId: string | undefined;
  private handler: MediaHandler | undefined;
  private pending: Pending[] = [];
  private readonly outbound: OutboundPath;
  private readonly abort = new AbortController();
  private logger: Logger;
  private dispatching = false;
  private arrival = 0;
  private messageTokens: number;
  private byteTokens: number;
  private lastRefill = this.openedMono;
  private readonly onEvent = (event: CarrierEvent): void => this.handle(event, this.arrival);

  constructor(private readonly o: MediaSessionOptions) {
    this.openedAt = o.clock.now();
    this.logger = o.logger;
    this.messageTokens = o.limits.messageBurst;
    this.byteTokens = o.limits.byteBurst;
    this.outbound = new OutboundPath(o.adapter, o.transport, this.telemetry, o.pacer, o.limits, (ack) =>
      this.playbackAck(ack),
    );
  }

  /** Call once the socket is open and the session is registered: counts it, and refuses a bad URL token. */
  open(): void {
    this.o.metrics.opened.inc({ carrier: this.o.carrier });
    this.o.metrics.active.inc({ carrier: this.o.carrier });
    if (this.o.urlToken && !this.o.urlToken.ok) {
      const { endedCall, adapter } = this.o;
      if (endedCall && adapter.encodeEvent) this.outbound.control(adapter.encodeEvent(endedCall));
      this.refuse(this.o.urlToken.reason);
    }
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /** One WebSocket message; `data` is only valid during this call. */
  receive(data: Uint8Array, isBinary: boolean): void {
    if (this.state === 'ended') return;
    const now = performance.now();
    if (!this.admit(now, data.byteLength)) {
      this.telemetry.inbound.rateLimited++;
      if (this.telemetry.inbound.rateLimited >= this.o.limits.floodCloseAfter) this.close('rate_limited');
      return;
    }
    this.telemetry.message(data.byteLength);
    this.dispatching = true;
    this.arrival = now;
    try {
      this.o.adapter.parse(data, isBinary, this.onEvent);
    } catch (err) {
      // Adapters do not throw on input; if one does, the message is skipped like any unreadable one.
      this.logger.debug({ err }, 'adapter failed on a message');
      this.bad('malformed');
    } finally {
      this.dispatching = false;
    }
  }

  /** The socket's send buffer drained. */
  drain(): void {
    this.outbound.drain();
  }

  /** The socket closed (by the peer, by idle timeout, or after our own close). */
  closed(code: number): void {
    this.finish(this.endReason ?? 'closed', code);
  }

  /** Once a second: start timeout, stuck backpressure, metrics. */
  housekeeping(nowMono: number): void {
    if (this.state === 'awaiting_start' && nowMono - this.openedMono > this.o.limits.startTimeoutMs) {
      this.close('start_timeout');
    } else if (this.state === 'live' && this.outbound.stuck(nowMono)) {
      this.close('backpressure');
    }
    this.o.metrics.flush(this.o.carrier, this.telemetry, this.metricsCursor);
  }

  /** Ends the stream from our side with a documented close code. */
  close(reason: CloseReason, endReason: string = reason): void {
    if (this.state === 'ended' || this.endReason !== undefined) return;
    this.endReason = endReason;
    this.closeLabel = reason;
    if (this.state === 'live')
      this.withCork(() => this.outbound.control(this.o.adapter.encodeEnd(endReason)));
    this.outbound.stop();
    this.o.transport.close(CLOSE[reason], reason);
    // A transport reports its close through closed(); finishing here too covers one that does not.
    this.finish(endReason, CLOSE[reason]);
  }

  summary(): StreamSummary {
    const end = this.endedAt ?? this.o.clock.now();
    return {
      carrier: this.o.carrier,
      state: this.state,
      callId: this.callId,
      streamId: this.start?.streamId,
      carrierCallId: this.start?.carrierCallId,
      format: this.start?.format,
      openedAt: isoTime(this.openedAt),
      endedAt: this.endedAt === undefined ? undefined : isoTime(this.endedAt),
      durationMs: end - this.openedAt,
      endReason: this.endReason,
      closeCode: this.closeCode,
      inbound: { ...this.telemetry.inbound, bad: { ...this.telemetry.inbound.bad } },
      outbound: { ...this.telemetry.outbound },
    };
  }

  private handle(event: CarrierEvent, arrival: number): void {
    if (event.type === 'bad') {
      this.bad(event.reason);
    } else if (event.type === 'unsupported_format') {
      this.logger.warn(
        { carrier: this.o.carrier, detail: event.detail.slice(0, 100) },
        'unsupported media format',
      );
      this.close('unsupported_format');
    } else if (event.type === 'start') {
      if (this.state !== 'awaiting_start') {
        this.close('duplicate_start');
        return;
      }
      this.state = 'authorizing';
      this.start = event.start;
      this.authorize(event).catch((err: unknown) => this.fail(err));
    } else if (event.type === 'ignored') {
      // keep-alives and informational messages
    } else if (this.state === 'live') {
      this.deliver(event, arrival);
    } else if (event.type === 'stop') {
      this.close('normal', 'stop');
    } else if (this.state === 'authorizing' && this.pending.length < this.o.limits.maxPendingEvents) {
      this.pending.push({ event, arrival });
    } else {
      this.bad('media_before_start');
    }
  }

  private async authorize(event: CarrierEvent & { type: 'start' }): Promise<void> {
    const stated = this.o.statedCallId ?? event.start.customParameters.call_id;
    let verdict: TokenVerdict;
    if (this.o.urlToken?.ok) {
      verdict =
        stated !== undefined && stated !== this.o.urlToken.callId
          ? { ok: false, reason: 'wrong_call' }
          : this.o.urlToken;
    } else {
      verdict = await this.o.tokens.verify(event.token, this.o.carrier, stated);
    }
    if (this.state !== 'authorizing') return;
    if (!verdict.ok) return this.withCork(() => this.refuse(verdict.reason));
    this.withCork(() => this.goLive(verdict.callId, event));
  }

  private goLive(callId: string, event: CarrierEvent & { type: 'start' }): void {
    const start = event.start;
    this.callId = callId;
    this.logger = this.o.logger.child({ callId, streamId: start.streamId });
    const output: MediaOutput = {
      sendAudio: (pcm16k) => this.withCork(() => this.outbound.audio(pcm16k)),
      sendMark: (name) => this.withCork(() => this.outbound.mark(name)),
      clear: () => this.withCork(() => this.outbound.clear()),
      end: (reason = 'hangup') => this.withCork(() => this.close('normal', reason)),
      queuedMs: () => this.outbound.queuedMs(performance.now()),
    };
    const { adapter } = this.o;
    if (adapter.encodeEvent) {
      output.sendEvent = (event) => this.withCork(() => this.outbound.control(adapter.encodeEvent!(event)));
    }
    const ctx: StreamContext = {
      carrier: this.o.carrier,
      callId,
      streamId: start.streamId,
      carrierCallId: start.carrierCallId,
      customParameters: start.customParameters,
      format: start.format,
      output,
      logger: this.logger,
      signal: this.abort.signal,
    };
    this.state = 'live';
    this.outbound.control(event.reply);
    this.logger.info({ carrier: this.o.carrier, format: start.format }, 'media stream started');
    try {
      this.handler = this.o.handlerFactory(ctx);
      this.watch(this.handler.onStart?.());
    } catch (err) {
      this.fail(err);
      return;
    }
    const pending = this.pending;
    this.pending = [];
    for (const p of pending) {
      if (this.state !== 'live') break;
      this.deliver(p.event, p.arrival);
    }
  }

  private deliver(event: CarrierEvent, arrival: number): void {
    const handler = this.handler!;
    try {
      switch (event.type) {
        case 'audio': {
          this.telemetry.audio(arrival, event.durationMs, event.timestampMs, event.chunk);
          for (const frame of event.frames) {
            this.telemetry.frame(frame);
            handler.onAudio(frame);
          }
          return;
        }
        case 'dtmf':
          this.telemetry.inbound.dtmf++;
          handler.onDtmf?.(event.digit, event.durationMs);
          return;
        case 'playback_ack':
          this.outbound.ack(event.name);
          return;
        case 'cleared':
          this.outbound.carrierCleared();
          return;
        case 'stop':
          this.close('normal', event.reason ?? 'stop');
          return;
        default:
          return;
      }
    } catch (err) {
      this.fail(err);
    }
  }

  private playbackAck(ack: PlaybackAck): void {
    if (this.state !== 'live') return;
    try {
      this.handler?.onPlaybackAck?.(ack);
    } catch (err) {
      this.fail(err);
    }
  }

  private refuse(reason: TokenRejection): void {
    this.o.metrics.tokenRejections.inc({ carrier: this.o.carrier, reason });
    this.logger.warn({ carrier: this.o.carrier, reason }, 'stream token refused');
    this.close(closeReasonForToken(reason));
  }

  private bad(reason: Parameters<StreamTelemetry['bad']>[0]): void {
    this.telemetry.bad(reason);
    if (this.telemetry.inbound.badMessages >= this.o.limits.maxBadMessages)
      this.close('too_many_bad_messages');
  }

  private fail(err: unknown): void {
    if (this.state === 'ended') return;
    this.logger.error({ err, carrier: this.o.carrier }, 'media handler failed');
    this.close('handler_failed');
  }

  private watch(result: void | Promise<void>): void {
    if (result && typeof (result as Promise<void>).then === 'function') {
      (result as Promise<void>).catch((err: unknown) => this.fail(err));
    }
  }

  private finish(reason: string, code: number | undefined): void {
    if (this.state === 'ended') return;
    const wasLive = this.state === 'live';
    this.state = 'ended';
    this.endReason ??= reason;
    this.closeCode = code;
    this.endedAt = this.o.clock.now();
    this.pending = [];
    this.outbound.stop();
    this.abort.abort();
    if (wasLive && this.handler?.onStop) {
      try {
        const result = this.handler.onStop({ reason: this.endReason, closeCode: code });
        if (result)
          result.catch((err: unknown) => this.logger.error({ err }, 'media handler failed in onStop'));
      } catch (err) {
        this.logger.error({ err }, 'media handler failed in onStop');
      }
    }
    const { metrics, carrier } = this.o;
    metrics.flush(carrier, this.telemetry, this.metricsCursor);
    metrics.closed.inc({ carrier, reason: this.closeLabel });
    metrics.active.dec({ carrier });
    this.logger.info(
      {
        carrier,
        duration_ms: Math.round(this.endedAt - this.openedAt),
        end_reason: this.endReason,
        close_code: code,
        ...streamEndFigures(this.telemetry.inbound, this.telemetry.outbound),
      },
      'media stream ended',
    );
    this.o.onEnd(this);
  }

  /** Writes from timers and promises are corked; writes inside a socket callback already are. */
  private withCork(fn: () => void): void {
    if (this.dispatching || this.state === 'ended') fn();
    else this.o.transport.cork(fn);
  }

  private admit(now: number, bytes: number): boolean {
    const { limits } = this.o;
    const elapsed = (now - this.lastRefill) / 1000;
    this.lastRefill = now;
    this.messageTokens = Math.min(limits.messageBurst, this.messageTokens + elapsed * limits.messagesPerSec);
    this.byteTokens = Math.min(limits.byteBurst, this.byteTokens + elapsed * limits.bytesPerSec);
    if (this.messageTokens < 1 || this.byteTokens < bytes) return false;
    this.messageTokens -= 1;
    this.byteTokens -= bytes;
    return true;
  }
}
