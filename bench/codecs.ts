/**
 * Codec cost per 20 ms frame: G.711, the resampler, the gateway's full per-frame codec path, and Opus.
 *
 *   npm run bench:codecs -- [--json] [--runs 9] [--run-ms 60]
 *
 * Each figure warms up first (so the JIT has compiled the loop), then runs `--runs` timed runs of about
 * `--run-ms` of CPU each and reports the median and the fastest run, in nanoseconds of this process's CPU time
 * per frame (user + system, from process.cpuUsage: on a shared machine wall time also counts the time the
 * process waited for a core), with the frames one core handles per second at the median. All outputs are preallocated, as the gateway does, unless
 * the name says otherwise. With `--json` the last line is one JSON object of the medians (ns per frame).
 * Variants that explain a design choice (computed mu-law without a table, an allocating resampler call, the
 * 'high' quality filter, 8k <-> 16k through the general polyphase filter instead of the half-band one) run in
 * the same process, so they compare under the same machine load.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import {
  alawDecode,
  alawEncode,
  mulawDecode,
  mulawEncode,
  OpusCodec,
  Resampler,
  samplesPerFrame,
} from '../codecs/index.ts';
import { PolyphaseStage } from '../codecs/resample-polyphase.ts';

interface Figure {
  key: string;
  label: string;
  medianNs: number;
  fastestNs: number;
}

function options(): { json: boolean; runs: number; runMs: number } {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      runs: { type: 'string', default: '9' },
      'run-ms': { type: 'string', default: '60' },
    },
    strict: false,
  });
  const runs = Number(values.runs);
  const runMs = Number(values['run-ms']);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer, got ${values.runs}`);
  if (!(runMs > 0)) throw new Error(`--run-ms must be positive, got ${values['run-ms']}`);
  return { json: process.argv.includes('--json'), runs, runMs };
}

/** CPU time of this process in nanoseconds (user + system), immune to being descheduled on a busy machine. */
function cpuNs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

/** Times `frame()` and returns CPU ns per call: median and fastest of `runs` runs of about `runMs` each. */
function measure(frame: () => void, runs: number, runMs: number): { medianNs: number; fastestNs: number } {
  // warm-up, which also sizes a run
  let iterations = 1000;
  let elapsed = 0;
  for (;;) {
    const start = cpuNs();
    for (let i = 0; i < iterations; i++) frame();
    elapsed = cpuNs() - start;
    if (elapsed > 20e6) break;
    iterations *= 2;
  }
  const perRun = Math.max(100, Math.round((iterations * runMs * 1e6) / elapsed));
  const perFrame: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = cpuNs();
    for (let i = 0; i < perRun; i++) frame();
    perFrame.push((cpuNs() - start) / perRun);
  }
  perFrame.sort((a, b) => a - b);
  return { medianNs: perFrame[Math.floor(perFrame.length / 2)]!, fastestNs: perFrame[0]! };
}

/** A 20 ms frame of speech-like test audio at `rateHz`: two tones and a little noise, about -12 dBFS. */
function testFrame(rateHz: number, index = 0): Int16Array {
  const n = samplesPerFrame(rateHz);
  let seed = 12345 + index;
  return Int16Array.from({ length: n }, (_, i) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const t = (index * n + i) / rateHz;
    const noise = ((seed >>> 16) / 65536 - 0.5) * 1000;
    return Math.round(
      6000 * Math.sin(2 * Math.PI * 440 * t) + 3000 * Math.sin(2 * Math.PI * 1700 * t) + noise,
    );
  });
}

/** mu-law by computation (no table), the same rule as codecs/g711.ts: what the 64 Ki-entry table saves. */
function mulawEncodeComputed(input: Int16Array, out: Uint8Array): void {
  for (let i = 0; i < input.length; i++) {
    let v = (input[i]! + 2) >> 2;
    let mask = 0xff;
    if (v < 0) {
      v = -v;
      mask = 0x7f;
    }
    if (v > 8159) v = 8159;
    v += 33;
    let segment = 0;
    for (let edge = 0x3f; v > edge && segment < 8; edge = (edge << 1) | 1) segment++;
    out[i] = (segment >= 8 ? 0x7f : (segment << 4) | ((v >> (segment + 1)) & 0x0f)) ^ mask;
  }
}

function main(): void {
  const { json, runs, runMs } = options();
  const figures: Figure[] = [];
  const add = (key: string, label: string, frame: () => void) => {
    figures.push({ key, label, ...measure(frame, runs, runMs) });
  };

  const pcm8 = testFrame(8000);
  const pcm16 = testFrame(16000);
  const pcm48 = testFrame(48000);
  const pcm24 = testFrame(24000);
  const pcm22 = testFrame(22050);
  const mulaw = mulawEncode(pcm8);
  const alaw = alawEncode(pcm8);
  const out8 = new Int16Array(160);
  const out16 = new Int16Array(320);
  const out48 = new Int16Array(960);
  const out24 = new Int16Array(480);
  const bytes = new Uint8Array(160);

  const computed = new Uint8Array(65536);
  const every = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
  mulawEncodeComputed(every, computed);
  if (!mulawEncode(every).every((code, i) => code === computed[i]))
    throw new Error('computed mu-law differs');

  add('mulaw_decode', 'mu-law decode (160 B -> 160 samples)', () => mulawDecode(mulaw, out8));
  add('mulaw_encode', 'mu-law encode (table)', () => mulawEncode(pcm8, bytes));
  add('mulaw_encode_computed', 'mu-law encode (computed, no table; reference)', () =>
    mulawEncodeComputed(pcm8, bytes),
  );
  add('alaw_decode', 'A-law decode', () => alawDecode(alaw, out8));
  add('alaw_encode', 'A-law encode (table)', () => alawEncode(pcm8, bytes));

  const up = new Resampler(8000, 16000);
  const down = new Resampler(16000, 8000);
  const up48 = new Resampler(16000, 48000);
  const down48 = new Resampler(48000, 16000);
  const up24 = new Resampler(16000, 24000);
  const down24 = new Resampler(24000, 16000);
  const down22 = new Resampler(22050, 16000);
  const upHigh = new Resampler(8000, 16000, { quality: 'high' });
  const upPolyphase = new PolyphaseStage(8000, 16000, 'voice');
  const downPolyphase = new PolyphaseStage(16000, 8000, 'voice');
  add('resample_8k_16k', 'resample 8k -> 16k (160 -> 320)', () => up.processInto(pcm8, out16));
  add('resample_16k_8k', 'resample 16k -> 8k (320 -> 160)', () => down.processInto(pcm16, out8));
  add('resample_16k_48k', 'resample 16k -> 48k (320 -> 960)', () => up48.processInto(pcm16, out48));
  add('resample_48k_16k', 'resample 48k -> 16k (960 -> 320)', () => down48.processInto(pcm48, out16));
  add('resample_16k_24k', 'resample 16k -> 24k (320 -> 480)', () => up24.processInto(pcm16, out24));
  add('resample_24k_16k', 'resample 24k -> 16k (480 -> 320)', () => down24.processInto(pcm24, out16));
  add('resample_22k_16k', 'resample 22.05k -> 16k (441 -> 320)', () => down22.processInto(pcm22, out16));
  add('resample_8k_16k_alloc', 'resample 8k -> 16k, new output array (process())', () => up.process(pcm8));
  add('resample_8k_16k_high', "resample 8k -> 16k, quality 'high' (64 taps/phase)", () =>
    upHigh.processInto(pcm8, out16),
  );
  add('resample_8k_16k_polyphase', 'resample 8k -> 16k, general polyphase filter (reference)', () =>
    upPolyphase.run(pcm8, out16),
  );
  add('resample_16k_8k_polyphase', 'resample 16k -> 8k, general polyphase filter (reference)', () =>
    downPolyphase.run(pcm16, out8),
  );

  const inbound = new Resampler(8000, 16000);
  const outbound = new Resampler(16000, 8000);
  const decoded = new Int16Array(160);
  const wide = new Int16Array(320);
  const narrow = new Int16Array(160);
  const encoded = new Uint8Array(160);
  add('gateway_path', 'gateway path: mu-law decode + 8k->16k + 16k->8k + mu-law encode', () => {
    mulawDecode(mulaw, decoded);
    inbound.processInto(decoded, wide);
    outbound.processInto(wide, narrow);
    mulawEncode(narrow, encoded);
  });

  const encoder = new OpusCodec(16000);
  const decoder = new OpusCodec(16000);
  const speech = Array.from({ length: 50 }, (_, i) => testFrame(16000, i));
  const packets = speech.map((f) => encoder.encode(f));
  let e = 0;
  let d = 0;
  add('opus_encode_16k', 'Opus encode 16 kHz (320 samples -> packet)', () => {
    encoder.encode(speech[e++ % speech.length]!);
  });
  add('opus_decode_16k', 'Opus decode 16 kHz (packet -> 320 samples)', () => {
    decoder.decode(packets[d++ % packets.length]!);
  });

  const load = os.loadavg().map((l) => l.toFixed(2));
  console.log(
    `codecs: CPU ns per 20 ms frame, median (fastest) of ${runs} runs of ~${runMs} ms; node ${process.version}, ` +
      `${os.cpus().length} CPUs, load average ${load.join(' ')}`,
  );
  const width = Math.max(...figures.map((f) => f.label.length));
  for (const f of figures) {
    const perCore = Math.round(1e9 / f.medianNs).toLocaleString('en-US');
    console.log(
      `  ${f.label.padEnd(width)}  ${f.medianNs.toFixed(0).padStart(7)} ns  (${f.fastestNs.toFixed(0).padStart(7)})` +
        `  ${perCore.padStart(12)} frames/s per core`,
    );
  }
  if (json) {
    const medians = Object.fromEntries(figures.map((f) => [f.key, Math.round(f.medianNs)]));
    console.log(JSON.stringify({ unit: 'ns_per_20ms_frame', runs, ...medians }));
  }
}

main();
