import { Counter, Gauge, type Registry } from 'prom-client';
import type { BadMessageReason, CarrierName } from './carriers/types.ts';
import type { StreamTelemetry } from './telemetry.ts';

/**
 * The gateway's Prometheus metrics (`gateway_*`), registered in the registry the composition root hands in
 * (the API role serves it at /metrics). Stream counters are fed as deltas from each stream's telemetry, so
 * the per-frame path touches plain numbers only.
 */

type CarrierLabel = 'carrier';

const STREAM_COUNTERS = {
  inboundFrames: ['gateway_inbound_frames_total', 'Canonical 20 ms frames received from carriers.'],
  gaps: [
    'gateway_inbound_gaps_total',
    'Gaps in inbound media (timestamps skipping ahead, or arrivals pausing).',
  ],
  lateFrames: [
    'gateway_inbound_late_frames_total',
    'Inbound frames arriving later than the jitter allowance.',
  ],
  clippedSamples: [
    'gateway_inbound_clipped_samples_total',
    'Inbound samples at full scale (clipping upstream).',
  ],
  rateLimited: [
    'gateway_rate_limited_messages_total',
    'Inbound messages skipped by the per-stream rate cap.',
  ],
  outboundMessages: ['gateway_outbound_messages_total', 'Messages sent to carriers and browsers.'],
  underruns: [
    'gateway_outbound_underruns_total',
    'Outbound audio that ran dry in the middle of an utterance.',
  ],
  backpressure: ['gateway_backpressure_events_total', 'Times a stream started buffering outbound data.'],
  droppedOutbound: ['gateway_outbound_dropped_total', 'Outbound audio messages dropped under backpressure.'],
} as const;

type StreamCounter = keyof typeof STREAM_COUNTERS;

/** What a stream has already added to the counters. */
export type MetricsCursor = Record<StreamCounter, number> & {
  bad: Partial<Record<BadMessageReason, number>>;
};

export function newMetricsCursor(): MetricsCursor {
  return {
    inboundFrames: 0,
    gaps: 0,
    lateFrames: 0,
    clippedSamples: 0,
    rateLimited: 0,
    outboundMessages: 0,
    underruns: 0,
    backpressure: 0,
    droppedOutbound: 0,
    bad: {},
  };
}

function counter<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: T[],
): Counter<T> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing as Counter<T>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function gauge<T extends string>(registry: Registry, name: string, help: string, labelNames: T[]): Gauge<T> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing as Gauge<T>;
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

export class GatewayMetrics {
  readonly native: Gauge;
  readonly active: Gauge<CarrierLabel>;
  readonly opened: Counter<CarrierLabel>;
  readonly closed: Counter<CarrierLabel | 'reason'>;
  readonly tokenRejections: Counter<CarrierLabel | 'reason'>;
  readonly badMessages: Counter<CarrierLabel | 'reason'>;
  private readonly streamCounters: Record<StreamCounter, Counter<CarrierLabel>>;

  constructor(registry: Registry) {
    this.native = gauge(
      registry,
      'gateway_native',
      '1 when uWebSockets.js runs its native binary, 0 on the fallback.',
      [],
    );
    this.active = gauge(registry, 'gateway_streams_active', 'Media streams open now.', ['carrier']);
    this.opened = counter(registry, 'gateway_streams_opened_total', 'Media stream sockets opened.', [
      'carrier',
    ]);
    this.closed = counter(registry, 'gateway_streams_closed_total', 'Media streams ended, by reason.', [
      'carrier',
      'reason',
    ]);
    this.tokenRejections = counter(
      registry,
      'gateway_token_rejections_total',
      'Streams refused for their stream token (the token itself is never logged).',
      ['carrier', 'reason'],
    );
    this.badMessages = counter(
      registry,
      'gateway_bad_messages_total',
      'Inbound messages skipped as unreadable.',
      ['carrier', 'reason'],
    );
    const counters = {} as Record<StreamCounter, Counter<CarrierLabel>>;
    for (const [key, [name, help]] of Object.entries(STREAM_COUNTERS) as [
      StreamCounter,
      readonly [string, string],
    ][]) {
      counters[key] = counter(registry, name, help, ['carrier']);
    }
    this.streamCounters = counters;
  }

  /** Adds what `telemetry` counted since `cursor` and moves the cursor. */
  flush(carrier: CarrierName, telemetry: StreamTelemetry, cursor: MetricsCursor): void {
    const i = telemetry.inbound;
    const o = telemetry.outbound;
    this.add(carrier, 'inboundFrames', i.frames, cursor);
    this.add(carrier, 'gaps', i.gaps, cursor);
    this.add(carrier, 'lateFrames', i.lateFrames, cursor);
    this.add(carrier, 'clippedSamples', i.clippedSamples, cursor);
    this.add(carrier, 'rateLimited', i.rateLimited, cursor);
    this.add(carrier, 'outboundMessages', o.messages, cursor);
    this.add(carrier, 'underruns', o.underruns, cursor);
    this.add(carrier, 'backpressure', o.backpressureEvents, cursor);
    this.add(carrier, 'droppedOutbound', o.droppedMessages, cursor);
    for (const [reason, count] of Object.entries(i.bad) as [BadMessageReason, number][]) {
      const delta = count - (cursor.bad[reason] ?? 0);
      if (delta > 0) this.badMessages.inc({ carrier, reason }, delta);
      cursor.bad[reason] = count;
    }
  }

  private add(carrier: CarrierName, key: StreamCounter, total: number, cursor: MetricsCursor): void {
    const delta = total - cursor[key];
    if (delta > 0) this.streamCounters[key].inc({ carrier }, delta);
    cursor[key] = total;
  }
}
