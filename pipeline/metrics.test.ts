import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import type { TurnLatency } from '../core/store/call-latency.ts';
import { PipelineMetrics, summarizeLatency } from './metrics.ts';

const turn = (v: number): TurnLatency => ({
  endpoint_ms: 500,
  stt_final_ms: v,
  llm_first_token_ms: 2 * v,
  tts_first_audio_ms: 3 * v,
  voice_to_voice_ms: 500 + 6 * v + 4,
  pipeline_overhead_ms: 4,
});

test('summary: median and p95 per figure; none without turns', () => {
  assert.equal(summarizeLatency([]), null);
  const s = summarizeLatency([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((v) => turn(v * 10)));
  assert.equal(s?.turns, 10);
  assert.equal(s?.p50.stt_final_ms, 50);
  assert.equal(s?.p95.stt_final_ms, 100);
  assert.equal(s?.p50.pipeline_overhead_ms, 4);
});

test('histograms are exported with engine and language labels', async () => {
  const registry = new Registry();
  const metrics = new PipelineMetrics(registry);
  metrics.observe(turn(100), { stt: 'deepgram', llm: 'openai', tts: 'espeak', language: 'hi-IN' });
  const text = await registry.metrics();
  assert.match(
    text,
    /pipeline_turn_voice_to_voice_ms_count\{stt="deepgram",llm="openai",tts="espeak",language="hi-IN"\} 1/,
  );
  assert.match(text, /pipeline_turn_pipeline_overhead_ms_bucket\{le="5",stt="deepgram"/);
});

test('replies started before the turn was confirmed are counted by outcome and discard reason', async () => {
  const registry = new Registry();
  const metrics = new PipelineMetrics(registry);
  metrics.speculation('started', undefined, 'openai');
  metrics.speculation('started', undefined, 'openai');
  metrics.speculation('used', undefined, 'openai');
  metrics.speculation('discarded', 'caller_resumed', 'openai');
  const text = await registry.metrics();
  assert.match(text, /pipeline_speculative_replies_total\{outcome="started",reason="",llm="openai"\} 2/);
  assert.match(text, /pipeline_speculative_replies_total\{outcome="used",reason="",llm="openai"\} 1/);
  assert.match(
    text,
    /pipeline_speculative_replies_total\{outcome="discarded",reason="caller_resumed",llm="openai"\} 1/,
  );
});
