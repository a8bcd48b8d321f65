import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CANONICAL_RATE } from '../../../codecs/index.ts';
import { Resampler } from '../../../codecs/resample.ts';
import { requiredInCi } from '../../../codecs/testing/ci.ts';
import { readWav } from '../../../codecs/wav.ts';

/**
 * Real speech for VAD tests, made by the eSpeak NG command line (Debian `espeak-ng`), and signals to mix it
 * with. In CI (`CI=1`) eSpeak NG is required: a test that needs it fails when it is missing. Elsewhere such
 * tests are skipped with a message saying how to install it.
 */

const INSTALL_HINT = 'install it with `apt-get update && apt-get install -y espeak-ng`';
const SAMPLES_PER_MS = CANONICAL_RATE / 1000;

function espeakInstalled(): boolean {
  return spawnSync('espeak-ng', ['--version'], { encoding: 'utf8' }).status === 0;
}

const installed = espeakInstalled();

/** For `test(name, { skip: espeakSkip }, ...)`: false when the test must run, else why it is skipped. */
export const espeakSkip: string | false =
  installed || requiredInCi() ? false : `espeak-ng is not installed (${INSTALL_HINT}); speech tests skipped`;

/** `text` spoken by eSpeak NG with `voice` (e.g. en-us, hi), as PCM16 mono 16 kHz, its own lead-in and tail included. */
export function speak(text: string, voice = 'en-us', wordsPerMinute = 160): Int16Array {
  if (!installed) throw new Error(`espeak-ng is required to run this test in CI; ${INSTALL_HINT}`);
  // A file, not --stdout: the streamed WAV header carries placeholder sizes.
  const dir = mkdtempSync(path.join(tmpdir(), 'vad-speech-'));
  try {
    const file = path.join(dir, 'speech.wav');
    const run = spawnSync('espeak-ng', ['-v', voice, '-s', String(wordsPerMinute), '-w', file, text], {
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`espeak-ng failed (${run.status}): ${run.stderr}`);
    const wav = readWav(readFileSync(file));
    const mono = wav.channels[0]!;
    if (wav.sampleRate === CANONICAL_RATE) return mono;
    const resampler = new Resampler(wav.sampleRate, CANONICAL_RATE);
    const body = resampler.process(mono);
    const tail = resampler.flush();
    // Drop the filter's run-in so sample n of the result is time n / 16 kHz of the original.
    const out = new Int16Array(body.length + tail.length);
    out.set(body, 0);
    out.set(tail, body.length);
    return out.subarray(resampler.delaySamples);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** First and last sample whose magnitude reaches `fraction` of the peak: where speech really is in `speak`'s output. */
export function audibleExtent(samples: Int16Array, fraction = 0.05): { from: number; to: number } {
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const limit = peak * fraction;
  let from = 0;
  while (from < samples.length && Math.abs(samples[from]!) < limit) from++;
  let to = samples.length;
  while (to > from && Math.abs(samples[to - 1]!) < limit) to--;
  return { from, to };
}

export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round(ms * SAMPLES_PER_MS));
}

/** Gaussian white noise with the given RMS (dBFS), from a seeded generator (reproducible). */
export function whiteNoise(ms: number, rmsDbfs: number, seed = 12345): Int16Array {
  const out = new Int16Array(Math.round(ms * SAMPLES_PER_MS));
  const sigma = 32768 * 10 ** (rmsDbfs / 20);
  let s = seed >>> 0 || 1;
  const uniform = (): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 1) / 4294967297;
  };
  for (let n = 0; n < out.length; n++) {
    const g = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    out[n] = Math.max(-32768, Math.min(32767, Math.round(g * sigma)));
  }
  return out;
}

/** A sine tone at `dbfs` RMS. */
export function tone(ms: number, freqHz: number, rmsDbfs: number): Int16Array {
  const out = new Int16Array(Math.round(ms * SAMPLES_PER_MS));
  const amplitude = 32768 * 10 ** (rmsDbfs / 20) * Math.SQRT2;
  for (let n = 0; n < out.length; n++)
    out[n] = Math.round(amplitude * Math.sin((2 * Math.PI * freqHz * n) / CANONICAL_RATE));
  return out;
}

/** Sample-wise sum, clipped; `b` is scaled by `gain` and may be shorter than `a`. */
export function mix(a: Int16Array, b: Int16Array, gain = 1): Int16Array {
  const out = new Int16Array(a.length);
  for (let n = 0; n < a.length; n++) {
    const v = a[n]! + (n < b.length ? b[n]! * gain : 0);
    out[n] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return out;
}

export interface Region {
  fromMs: number;
  toMs: number;
}

/**
 * Concatenate parts in order and report where each spoken part's audible speech lies (ms of the result).
 * A part is silence/noise (`Int16Array`) or speech (`{ speech }`).
 */
export function compose(parts: ReadonlyArray<Int16Array | { speech: Int16Array }>): {
  audio: Int16Array;
  speech: Region[];
} {
  const arrays = parts.map((p) => (p instanceof Int16Array ? p : p.speech));
  const audio = new Int16Array(arrays.reduce((n, a) => n + a.length, 0));
  const speech: Region[] = [];
  let at = 0;
  for (const part of parts) {
    const samples = part instanceof Int16Array ? part : part.speech;
    audio.set(samples, at);
    if (!(part instanceof Int16Array)) {
      const { from, to } = audibleExtent(samples);
      speech.push({ fromMs: (at + from) / SAMPLES_PER_MS, toMs: (at + to) / SAMPLES_PER_MS });
    }
    at += samples.length;
  }
  return { audio, speech };
}

/** 20 ms frames (320 samples) of `audio`, the last one possibly shorter. */
export function* frames(audio: Int16Array, frameSamples = 320): Generator<Int16Array> {
  for (let at = 0; at < audio.length; at += frameSamples) yield audio.subarray(at, at + frameSamples);
}
