/**
 * Voice activity detection cost: CPU per analysis window for Silero (our inference loop, one stream alone and
 * many streams batched into shared runs) and for the energy detector.
 *
 *   node --import tsx bench/vad.ts [--json] [--runs 7] [--windows 400]
 *
 * Figures are microseconds of this process's CPU time (user + system, from process.cpuUsage: on a shared
 * machine wall time also counts waiting for a core) per window: a Silero window is 512 samples (32 ms of
 * audio), an energy window 320 samples (20 ms). "per call-second" is the CPU one call's audio costs per second
 * (31.25 Silero windows or 50 energy windows), and "calls/core" is 1 s divided by it, VAD alone. Each figure
 * is the median of `--runs` runs after a warm-up; variants run in the same process, so they compare under
 * the same machine load. With `--json` the last line is one JSON object of the medians.
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EnergyVad } from '../engines/vad/providers/energy.ts';
import { bundledSileroModelPath, SileroVad } from '../engines/vad/providers/silero.ts';
import type { VadStream } from '../engines/vad/types.ts';

const SILERO_WINDOW = 512;
const ENERGY_WINDOW = 320;
const MS_PER_SECOND = 1000;

interface Figure {
  key: string;
  label: string;
  windowMs: number;
  medianUs: number;
  fastestUs: number;
  meanBatch?: number;
}

function options(): { json: boolean; runs: number; windows: number } {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      runs: { type: 'string', default: '7' },
      windows: { type: 'string', default: '400' },
    },
    strict: true,
  });
  const runs = Number(values.runs);
  const windows = Number(values.windows);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  if (!Number.isInteger(windows) || windows < 10)
    throw new Error(`--windows must be >= 10, got ${values.windows}`);
  return { json: values.json === true, runs, windows };
}

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Speech-like audio: two tones with a slow syllable envelope and a little noise, about -20 dBFS. */
function testAudio(samples: number): Int16Array {
  const out = new Int16Array(samples);
  let seed = 0x2545f491;
  for (let n = 0; n < samples; n++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const envelope = 0.5 + 0.5 * Math.sin((2 * Math.PI * 4 * n) / 16000);
    const voiced =
      Math.sin((2 * Math.PI * 140 * n) / 16000) + 0.5 * Math.sin((2 * Math.PI * 720 * n) / 16000);
    out[n] = Math.round(3000 * envelope * voiced + ((seed >>> 16) - 32768) / 64);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** `streams` concurrent streams, each pushed one window per step (not awaited across streams); CPU us per window. */
async function sileroRun(
  vad: SileroVad,
  streams: number,
  windows: number,
  audio: Int16Array,
): Promise<number> {
  const all: VadStream[] = Array.from({ length: streams }, () => vad.createStream());
  const steps = Math.max(1, Math.round(windows / streams));
  const start = cpuUs();
  for (let step = 0; step < steps; step++) {
    const at = (step * SILERO_WINDOW) % (audio.length - SILERO_WINDOW);
    const frame = audio.subarray(at, at + SILERO_WINDOW);
    await Promise.all(all.map((s) => s.push(frame)));
  }
  return (cpuUs() - start) / (steps * streams);
}

async function sileroFigure(
  vad: SileroVad,
  key: string,
  label: string,
  streams: number,
  opts: { runs: number; windows: number },
  audio: Int16Array,
): Promise<Figure> {
  await sileroRun(vad, streams, opts.windows, audio); // warm-up
  const runsBefore = vad.stats.runs;
  const windowsBefore = vad.stats.windows;
  const perWindow: number[] = [];
  for (let r = 0; r < opts.runs; r++) perWindow.push(await sileroRun(vad, streams, opts.windows, audio));
  const meanBatch = (vad.stats.windows - windowsBefore) / (vad.stats.runs - runsBefore);
  return {
    key,
    label,
    windowMs: 32,
    medianUs: median(perWindow),
    fastestUs: Math.min(...perWindow),
    meanBatch,
  };
}

function energyFigure(opts: { runs: number; windows: number }, audio: Int16Array): Figure {
  const stream = new EnergyVad().createStream();
  const frames = Math.floor(audio.length / ENERGY_WINDOW);
  const windows = opts.windows * 50;
  const once = (): number => {
    const start = cpuUs();
    for (let i = 0; i < windows; i++) {
      const at = (i % frames) * ENERGY_WINDOW;
      stream.analyse(audio.subarray(at, at + ENERGY_WINDOW));
    }
    return (cpuUs() - start) / windows;
  };
  once();
  const perWindow = Array.from({ length: opts.runs }, once);
  return {
    key: 'energy',
    label: 'energy, per 20 ms window',
    windowMs: 20,
    medianUs: median(perWindow),
    fastestUs: Math.min(...perWindow),
  };
}

async function main(): Promise<void> {
  const opts = options();
  const audio = testAudio(16000 * 10);
  const vad = await SileroVad.load();
  const combined = await SileroVad.load({
    modelPath: path.join(path.dirname(bundledSileroModelPath()), 'silero_vad.onnx'),
  });
  const figures: Figure[] = [
    await sileroFigure(vad, 'silero_1', 'silero 16k v6, 1 stream', 1, opts, audio),
    await sileroFigure(combined, 'silero_8k16k_1', 'silero 8k+16k model, 1 stream (variant)', 1, opts, audio),
    await sileroFigure(vad, 'silero_8', 'silero 16k v6, 8 streams batched', 8, opts, audio),
    await sileroFigure(vad, 'silero_32', 'silero 16k v6, 32 streams batched', 32, opts, audio),
    await sileroFigure(vad, 'silero_100', 'silero 16k v6, 100 streams batched', 100, opts, audio),
    energyFigure(opts, audio),
  ];
  await SileroVad.releaseAll();

  console.log(
    `VAD CPU per window (median of ${opts.runs} runs; ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version})`,
  );
  for (const f of figures) {
    const perCallSecond = (f.medianUs * MS_PER_SECOND) / f.windowMs;
    const batch = f.meanBatch === undefined ? '' : `  mean batch ${f.meanBatch.toFixed(1)}`;
    console.log(
      `${f.label.padEnd(44)} ${f.medianUs.toFixed(1).padStart(7)} us/window (fastest ${f.fastestUs.toFixed(1)})` +
        `  ${(perCallSecond / 1000).toFixed(2)} ms per call-second  ~${Math.floor(1e6 / perCallSecond)} calls/core${batch}`,
    );
  }
  if (opts.json) console.log(JSON.stringify(Object.fromEntries(figures.map((f) => [f.key, f.medianUs]))));
}

await main();
