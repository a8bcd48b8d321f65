import { Histogram, type Registry } from 'prom-client';

/**
 * Latency of one agent turn, all in ms, measured from the moment the caller stopped speaking (VAD speech end):
 * - endpoint_ms: silence waited before the turn was declared over;
 * - stt_final_ms: from the caller stopping to the final transcript;
 * - llm_first_token_ms: from sending the request to the first token;
 * - tts_first_audio_ms: from sending the first clause to its first audio;
 * - voice_to_voice_ms: from the caller stopping to the first agent audio handed to the carrier;
 * - pipeline_overhead_ms: voice_to_voice minus the engines' time and the endpoint silence: what we add.
 */
/** A type, not an interface: it is stored and sent as JSON as it is. */
export type TurnLatency = {
  endpoint_ms: number;
  stt_final_ms: number;
  llm_first_token_ms: number;
  tts_first_audio_ms: number;
  voice_to_voice_ms: number;
  pipeline_overhead_ms: number;
};

export const LATENCY_FIELDS = [
  'endpoint_ms',
  'stt_final_ms',
  'llm_first_token_ms',
  'tts_first_audio_ms',
  'voice_to_voice_ms',
  'pipeline_overhead_ms',
] as const satisfies ReadonlyArray<keyof TurnLatency>;

export interface LatencyLabels {
  stt: string;
  llm: string;
  tts: string;
  language: string;
}

/** The per-turn histograms in /metrics; one instance per process, shared by every call. */
export class PipelineMetrics {
  private readonly histograms: Record<keyof TurnLatency, Histogram<'stt' | 'llm' | 'tts' | 'language'>>;

  constructor(registry: Registry) {
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
}

/** The latency summary kept on the call: median and 95th percentile of each figure over its turns. */
export type LatencySummary = {
  turns: number;
  p50: TurnLatency;
  p95: TurnLatency;
};

export function summarizeLatency(turns: readonly TurnLatency[]): LatencySummary | null {
  if (turns.length === 0) return null;
  const pick = (q: number) =>
    Object.fromEntries(
      LATENCY_FIELDS.map((field) => {
        const sorted = turns.map((t) => t[field]).sort((a, b) => a - b);
        const value = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
        return [field, Math.round(value * 10) / 10];
      }),
    ) as unknown as TurnLatency;
  return { turns: turns.length, p50: pick(0.5), p95: pick(0.95) };
}
