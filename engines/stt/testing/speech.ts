/**
 * Audio for STT tests, PCM16 mono 16 kHz: silence, a synthetic "utterance" (voiced syllables that any energy
 * detector hears as speech, for engines faked by scripted servers), and real speech made by eSpeak NG (the
 * Debian `espeak-ng` package) for engines that actually recognise words.
 */
import { spawnSync } from 'node:child_process';
import { CANONICAL_RATE, Resampler, readWav } from '../../../codecs/index.ts';

export const FRAME_SAMPLES = 320;

export function silence(ms: number): Int16Array {
  return new Int16Array((ms * CANONICAL_RATE) / 1000);
}

/**
 * Voiced syllables: 180 ms of a 140 Hz buzz with harmonics (about -14 dBFS) then 70 ms of near silence, repeated
 * for `ms`. The gaps are what real speech has between syllables, so an adaptive noise floor stays low.
 */
export function syntheticSpeech(ms: number): Int16Array {
  const out = new Int16Array((ms * CANONICAL_RATE) / 1000);
  const syllable = (250 * CANONICAL_RATE) / 1000;
  const voiced = (180 * CANONICAL_RATE) / 1000;
  for (let n = 0; n < out.length; n++) {
    const inSyllable = n % syllable;
    if (inSyllable >= voiced) {
      out[n] = ((n * 7919) % 7) - 3;
      continue;
    }
    const t = n / CANONICAL_RATE;
    const envelope = Math.sin((Math.PI * inSyllable) / voiced);
    let v = 0;
    for (let h = 1; h <= 6; h++) v += Math.sin(2 * Math.PI * 140 * h * t) / h;
    out[n] = Math.round(7000 * envelope * v);
  }
  return out;
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** 20 ms frames (the last one may be shorter), as a carrier delivers them. */
export function frames(audio: Int16Array, size = FRAME_SAMPLES): Int16Array[] {
  const out: Int16Array[] = [];
  for (let at = 0; at < audio.length; at += size) out.push(audio.subarray(at, at + size));
  return out;
}

export function pushAll(stream: { push(frame: Int16Array): void }, audio: Int16Array): void {
  for (const frame of frames(audio)) stream.push(frame);
}

/** Whether the `espeak-ng` command runs here. */
export function espeakInstalled(): boolean {
  const probe = spawnSync('espeak-ng', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

/**
 * `text` spoken by eSpeak NG (American English voice by default, 150 words a minute: what PocketSphinx's en-us
 * model recognises best of the voices tried), resampled from eSpeak's 22.05 kHz to 16 kHz.
 */
export function espeak(text: string, options: { voice?: string; wordsPerMinute?: number } = {}): Int16Array {
  const run = spawnSync(
    'espeak-ng',
    ['-v', options.voice ?? 'en-us', '-s', String(options.wordsPerMinute ?? 150), '--stdout', text],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  if (run.error !== undefined || run.status !== 0) {
    throw new Error(`espeak-ng failed: ${run.error?.message ?? run.stderr.toString()}`);
  }
  const wav = readWav(run.stdout);
  const speech = wav.channels[0]!;
  if (wav.sampleRate === CANONICAL_RATE) return speech;
  const resampler = new Resampler(wav.sampleRate, CANONICAL_RATE);
  return concat(resampler.process(speech), resampler.flush());
}

/** Share of the expected words found in the heard text (case and punctuation ignored), 0..1. */
export function wordOverlap(heard: string, expected: string): number {
  const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
  const wanted = words(expected);
  if (wanted.length === 0) return 1;
  const got = new Set(words(heard));
  return wanted.filter((w) => got.has(w)).length / wanted.length;
}
