/**
 * Instructions per 20 ms frame through one streaming Resampler (or the gateway's codec path), counted by
 * callgrind: repeatable whatever else runs on the machine, where CPU time is not.
 *
 *   node --import tsx bench/resample-ir.ts --callgrind [--from 8000 --to 16000 | --path gateway] [--frames 10000]
 *
 * With --callgrind the script runs itself twice under `valgrind --tool=callgrind`, resampling N and 5N frames,
 * and prints (Ir(5N) - Ir(N)) / 4N: Node's start-up and the JIT's warm-up, the same in both runs, cancel out.
 * V8 then compiles on the main thread (--no-concurrent-recompilation), so that the optimised code takes over
 * after the same number of frames in both runs (a background compile finishes after a number of frames that
 * depends on the machine's load). Without --callgrind it just resamples the frames: that is what gets counted.
 * `--path gateway` runs the gateway's codec path instead: mu-law decode, 8k->16k, 16k->8k, mu-law encode.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  mulawDecode,
  mulawEncode,
  type ResampleQuality,
  Resampler,
  samplesPerFrame,
} from '../codecs/index.ts';

interface Options {
  from: number;
  to: number;
  frames: number;
  quality: ResampleQuality;
  gateway: boolean;
  callgrind: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      from: { type: 'string', default: '8000' },
      to: { type: 'string', default: '16000' },
      frames: { type: 'string', default: '10000' },
      quality: { type: 'string', default: 'voice' },
      path: { type: 'string', default: 'resample' },
      callgrind: { type: 'boolean', default: false },
    },
  });
  const frames = Number(values.frames);
  if (!Number.isInteger(frames) || frames < 1) throw new Error('--frames must be a positive integer');
  if (values.quality !== 'voice' && values.quality !== 'high') throw new Error('--quality is voice or high');
  if (values.path !== 'resample' && values.path !== 'gateway')
    throw new Error('--path is resample or gateway');
  return {
    from: Number(values.from),
    to: Number(values.to),
    frames,
    quality: values.quality,
    gateway: values.path === 'gateway',
    callgrind: values.callgrind,
  };
}

/** A 20 ms frame of two tones, about -12 dBFS (the content does not change the instruction count). */
function toneFrame(rateHz: number): Int16Array {
  return Int16Array.from({ length: samplesPerFrame(rateHz) }, (_, i) =>
    Math.round(
      6000 * Math.sin((2 * Math.PI * 440 * i) / rateHz) + 3000 * Math.sin((2 * Math.PI * 1700 * i) / rateHz),
    ),
  );
}

/** Runs the frames; returns a checksum of the outputs so that nothing can be optimised away. */
function resampleFrames({ from, to, frames, quality, gateway }: Options): number {
  let checksum = 0;
  if (gateway) {
    const mulaw = mulawEncode(toneFrame(8000));
    const inbound = new Resampler(8000, 16000, { quality });
    const outbound = new Resampler(16000, 8000, { quality });
    const decoded = new Int16Array(160);
    const wide = new Int16Array(320);
    const narrow = new Int16Array(160);
    const encoded = new Uint8Array(160);
    for (let f = 0; f < frames; f++) {
      mulawDecode(mulaw, decoded);
      inbound.processInto(decoded, wide);
      outbound.processInto(wide, narrow);
      mulawEncode(narrow, encoded);
      checksum += encoded[f % 160]!;
    }
    return checksum;
  }
  const input = toneFrame(from);
  const resampler = new Resampler(from, to, { quality });
  const out = new Int16Array(resampler.outputLength(input.length) + 1);
  for (let f = 0; f < frames; f++) {
    resampler.processInto(input, out);
    checksum += out[f % 100]!;
  }
  return checksum;
}

/** Total instructions of this script under callgrind with `frames` frames (the callgrind file's summary). */
function countInstructions(frames: number, directory: string): number {
  const outFile = path.join(directory, `callgrind.${frames}.out`);
  const args = process.argv.slice(2).filter((arg) => arg !== '--callgrind');
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${outFile}`,
      process.execPath,
      '--no-concurrent-recompilation',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      ...args,
      '--frames',
      String(frames),
    ],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`valgrind failed (${run.status}): ${run.stderr.slice(-2000)}`);
  const summary = /^summary: (\d+)/m.exec(readFileSync(outFile, 'utf8'));
  if (!summary) throw new Error(`no summary line in ${outFile}`);
  return Number(summary[1]);
}

function main(): void {
  const opts = options();
  const what = opts.gateway ? 'gateway codec path' : `${opts.from} -> ${opts.to} (${opts.quality})`;
  if (!opts.callgrind) {
    console.log(`${what}: ${opts.frames} frames, checksum ${resampleFrames(opts)}`);
    return;
  }
  const directory = mkdtempSync(path.join(os.tmpdir(), 'resample-ir-'));
  try {
    const few = countInstructions(opts.frames, directory);
    const many = countInstructions(5 * opts.frames, directory);
    const perFrame = Math.round((many - few) / (4 * opts.frames));
    console.log(
      `${what}: ${perFrame.toLocaleString('en-US')} Ir per frame ` +
        `(callgrind totals ${few.toLocaleString('en-US')} for ${opts.frames} frames, ` +
        `${many.toLocaleString('en-US')} for ${5 * opts.frames})`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main();
