/**
 * The floors the pipeline's parts are compared with, measured in the sessions process right after its window
 * (same process, same machine load): Silero inference alone per window, through the same shared model, with
 * as many streams batched as the run averaged; and resampling alone per 20 ms frame of agent audio, the TTS
 * provider's 24 kHz -> 16 kHz. CPU time of this process (user + system), median of a few runs after a warm-up.
 */
import { CANONICAL_RATE, Resampler } from '../codecs/index.ts';
import type { SileroVad } from '../engines/vad/providers/silero.ts';
import { SILERO_WINDOW_SAMPLES } from '../engines/vad/providers/silero.ts';
import type { PipelineFloors } from './pipeline-protocol.ts';

/** The OpenAI speech API's PCM rate, which the TTS provider resamples to the canonical 16 kHz. */
const TTS_RATE = 24_000;
const RUNS = 5;

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Loud speech-like audio at `rate`: no window is left to the silence gate. */
function voiced(samples: number, rate: number): Int16Array {
  const out = new Int16Array(samples);
  for (let n = 0; n < samples; n++) {
    const envelope = 0.6 + 0.4 * Math.sin((2 * Math.PI * 4 * n) / rate);
    out[n] = Math.round(
      5000 *
        envelope *
        (Math.sin((2 * Math.PI * 140 * n) / rate) + 0.5 * Math.sin((2 * Math.PI * 720 * n) / rate)),
    );
  }
  return out;
}

async function sileroUsPerWindow(vad: SileroVad, batch: number): Promise<number> {
  const streams = Array.from({ length: batch }, () => vad.createStream());
  const audio = voiced(CANONICAL_RATE * 4, CANONICAL_RATE);
  const steps = Math.max(8, Math.ceil(200 / batch));
  const run = async (): Promise<number> => {
    const start = cpuUs();
    for (let step = 0; step < steps; step++) {
      const at = (step * SILERO_WINDOW_SAMPLES) % (audio.length - SILERO_WINDOW_SAMPLES);
      const window = audio.subarray(at, at + SILERO_WINDOW_SAMPLES);
      await Promise.all(streams.map((s) => s.push(window)));
    }
    return (cpuUs() - start) / (steps * batch);
  };
  await run();
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await run());
  return median(runs);
}

function resampleUsPerFrame(): number {
  const resampler = new Resampler(TTS_RATE, CANONICAL_RATE);
  const input = voiced((TTS_RATE * 20) / 1000, TTS_RATE);
  const out = new Int16Array(resampler.outputLength(input.length) + 8);
  const frames = 2000;
  const run = (): number => {
    const start = cpuUs();
    for (let i = 0; i < frames; i++) resampler.processInto(input, out);
    return (cpuUs() - start) / frames;
  };
  for (let i = 0; i < 5; i++) run();
  return median(Array.from({ length: RUNS }, run));
}

export async function measureFloors(vad: SileroVad, meanBatch: number): Promise<PipelineFloors> {
  const batch = Math.max(1, Math.round(meanBatch));
  return {
    sileroUsPerWindow: await sileroUsPerWindow(vad, batch),
    sileroBatch: batch,
    resampleUsPerFrame: resampleUsPerFrame(),
  };
}

/** The floors for a whole call (bench:calls), per second of call, measured in the benchmark's own process. */
export interface CallFloors {
  /** Silero inference alone at `sileroBatch` streams batched, per window. */
  sileroUsPerWindow: number;
  sileroBatch: number;
  /** The gateway's 8 -> 16 kHz of a 20 ms inbound frame and 16 -> 8 kHz of a 20 ms outbound one. */
  telephonyResampleUsPerFramePair: number;
  /** The TTS provider's 24 -> 16 kHz per 20 ms frame of agent audio. */
  ttsResampleUsPerFrame: number;
}

function telephonyResampleUsPerFramePair(): number {
  const up = new Resampler(8000, CANONICAL_RATE);
  const down = new Resampler(CANONICAL_RATE, 8000);
  const narrow = voiced(160, 8000);
  const wide = new Int16Array(320);
  const back = new Int16Array(160);
  const frames = 5000;
  const run = (): number => {
    const start = cpuUs();
    for (let i = 0; i < frames; i++) {
      up.processInto(narrow, wide);
      down.processInto(wide, back);
    }
    return (cpuUs() - start) / frames;
  };
  for (let i = 0; i < 5; i++) run();
  return median(Array.from({ length: RUNS }, run));
}

export async function measureCallFloors(sileroBatch: number): Promise<CallFloors> {
  const { SileroVad } = await import('../engines/vad/providers/silero.ts');
  const vad = await SileroVad.load();
  try {
    const batch = Math.max(1, Math.round(sileroBatch));
    return {
      sileroUsPerWindow: await sileroUsPerWindow(vad, batch),
      sileroBatch: batch,
      telephonyResampleUsPerFramePair: telephonyResampleUsPerFramePair(),
      ttsResampleUsPerFrame: resampleUsPerFrame(),
    };
  } finally {
    await SileroVad.releaseAll();
  }
}
