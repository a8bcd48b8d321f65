import { z } from 'zod';

/**
 * Latency of one agent turn, all in ms, measured from the moment the caller stopped speaking (VAD speech end):
 * - endpoint_ms: silence waited before the turn was declared over;
 * - stt_final_ms: from the caller stopping to the final transcript;
 * - llm_first_token_ms: from sending the request to the first token;
 * - tts_first_audio_ms: from sending the first clause to its first audio;
 * - voice_to_voice_ms: from the caller stopping to the first agent audio handed to the carrier;
 * - pipeline_overhead_ms: voice_to_voice minus the engines' time and the endpoint silence: what we add.
 */
export const turnLatencySchema = z.object({
  endpoint_ms: z.number(),
  stt_final_ms: z.number(),
  llm_first_token_ms: z.number(),
  tts_first_audio_ms: z.number(),
  voice_to_voice_ms: z.number(),
  pipeline_overhead_ms: z.number(),
});
export type TurnLatency = z.output<typeof turnLatencySchema>;
export const LATENCY_FIELDS = turnLatencySchema.keyof().options;

/** The latency summary kept on the call (the pipeline measures it): each figure's median and 95th percentile. */
export const callLatencySchema = z.object({
  turns: z.number().int(),
  p50: turnLatencySchema,
  p95: turnLatencySchema,
});
export type CallLatency = z.output<typeof callLatencySchema>;

/**
 * The one decoder of a call's stored latency JSON (the calls repository reads it through here). A summary
 * that does not decode reads as none: it describes the call and never decides anything about it.
 */
export function storedLatency(json: unknown): CallLatency | null {
  const decoded = callLatencySchema.safeParse(json);
  return decoded.success ? decoded.data : null;
}
