import { Counter, Histogram, type Registry } from 'prom-client';
import { type CallLatency, LATENCY_FIELDS, type TurnLatency } from '../core/store/call-latency.ts';
import type { DiscardReason, SpeculationOutcome } from './speculative-reply.ts';

export interface LatencyLabels {
  stt: string;
  llm: string;
  tts: string;
  language: string;
}

/** The per-turn histograms in /metrics; one instance per process, shared by every call. */
export class PipelineMetrics {
  private readonly histograms: Record<keyof TurnLatency, Histogram<'stt' | 'llm' | 'tts' | 'language'>>;
  private readonly speculative: Counter<'outcome' | 'reason' | 'llm'>;

  constructor(registry: Registry) {
    this.speculative = new Counter({
      name: 'pipeline_speculative_replies_total',
      help:
        'Replies started before the caller turn was confirmed (behavior.speculative_replies), by outcome: started, ' +
        'used (the turn answer) or discarded (a model request thrown away; reason says why)',
      labelNames: ['outcome', 'reason', 'llm'] as const,
      registers: [registry],
    });
    const buckets = [5, 10, 25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000];
    this.histograms = Object.fromEntries(
      LATENCY_FIELDS.map((field) => [
        field,
        new Histogram({
          name: `pipeline_turn_${field}`,
          help: `Per agent turn: ${field.replace(/_ms$/, '').replaceAll('_', ' ')} (ms)`,
          labelNames: ['stt', 'llm', 'tts', 'language'] as const,
          buckets: field === 'pipeline_overhead_ms' ? [0.5, 1, 2, 5, 10, 15, 25, 50, 100, 250] : buckets,
          registers: [registry],
        }),
      ]),
    ) as PipelineMetrics['histograms'];
  }

  observe(turn: TurnLatency, labels: LatencyLabels): void {
    for (const field of LATENCY_FIELDS) this.histograms[field].observe(labels, turn[field]);
  }

  /** A reply started before the turn was confirmed, and what became of it. */
  speculation(outcome: SpeculationOutcome, reason: DiscardReason | undefined, llm: string): void {
    this.speculative.inc({ outcome, reason: reason ?? '', llm });
  }
}

/** The latency summary kept on the call: median and 95th percentile of each figure over its turns. */
export function summarizeLatency(turns: readonly TurnLatency[]): CallLatency | null {
  if (turns.length === 0) return null;
  const pick = (q: number): TurnLatency => {
    const at = (field: keyof TurnLatency): number => {
      const sorted = turns.map((t) => t[field]).sort((a, b) => a - b);
      const value = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
      return Math.round(value * 10) / 10;
    };
    return {
      endpoint_ms: at('endpoint_ms'),
      stt_final_ms: at('stt_final_ms'),
      llm_first_token_ms: at('llm_first_token_ms'),
      tts_first_audio_ms: at('tts_first_audio_ms'),
      voice_to_voice_ms: at('voice_to_voice_ms'),
      pipeline_overhead_ms: at('pipeline_overhead_ms'),
    };
  };
  return { turns: turns.length, p50: pick(0.5), p95: pick(0.95) };
}
