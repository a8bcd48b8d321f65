import type { CallView, LatencyFigures } from './call-watch.ts';
import { median, percentile, sum } from './stats.ts';

/**
 * What a run's ended calls say about the pipeline. Each call reports its own per-turn p50 and p95; across calls
 * the p50 figures are the median of the calls' p50, and the p95 figures the 95th percentile of the calls' p95
 * (a tail over tails: one slow call shows).
 */

export interface ConversationFigures {
  byStatus: Record<string, number>;
  completed: number;
  /** Calls that measured at least one turn. */
  withLatency: number;
  turns: number;
  liveSeconds: number;
  voiceToVoiceP50Ms: number;
  voiceToVoiceP95Ms: number;
  overheadP50Ms: number;
  overheadP95Ms: number;
  /** Medians of the calls' p50 of each stage, to show where voice to voice goes. */
  stagesP50Ms: Record<Exclude<keyof LatencyFigures, 'voice_to_voice_ms' | 'pipeline_overhead_ms'>, number>;
}

const STAGES = ['endpoint_ms', 'stt_final_ms', 'llm_first_token_ms', 'tts_first_audio_ms'] as const;

export function conversationFigures(calls: readonly CallView[]): ConversationFigures {
  const byStatus: Record<string, number> = {};
  for (const call of calls) byStatus[call.status] = (byStatus[call.status] ?? 0) + 1;
  const measured = calls.filter((call) => call.latency?.p50 !== undefined && call.latency.p95 !== undefined);
  const p50 = (field: keyof LatencyFigures): number[] =>
    measured.map((call) => call.latency?.p50?.[field] ?? Number.NaN);
  const p95 = (field: keyof LatencyFigures): number[] =>
    measured.map((call) => call.latency?.p95?.[field] ?? Number.NaN);
  return {
    byStatus,
    completed: byStatus['completed'] ?? 0,
    withLatency: measured.length,
    turns: sum(measured.map((call) => call.latency?.turns ?? 0)),
    liveSeconds: sum(calls.map((call) => call.duration_secs)),
    voiceToVoiceP50Ms: median(p50('voice_to_voice_ms')),
    voiceToVoiceP95Ms: percentile(p95('voice_to_voice_ms'), 95),
    overheadP50Ms: median(p50('pipeline_overhead_ms')),
    overheadP95Ms: percentile(p95('pipeline_overhead_ms'), 95),
    stagesP50Ms: Object.fromEntries(STAGES.map((stage) => [stage, median(p50(stage))])) as Record<
      (typeof STAGES)[number],
      number
    >,
  };
}
