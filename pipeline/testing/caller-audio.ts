/**
 * Caller audio for session tests, PCM16 mono 16 kHz: speech made by eSpeak NG (the same WASM engine the agent
 * speaks with, so it runs wherever the tests do), tones made by sox (beeps, DTMF-like pairs), silence, and a
 * cough-like voiced burst with no words in it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CANONICAL_RATE, readWav } from '../../codecs/index.ts';
import type { VoiceRouter } from '../../engines/tts/index.ts';

const SAMPLES_PER_MS = 16;
/** Below this a sample is eSpeak's lead-in or tail silence (its speech peaks near 10,000). */
const SILENCE_AMPLITUDE = 300;

export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round(ms * SAMPLES_PER_MS));
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

export function durationMs(audio: Int16Array): number {
  return audio.length / SAMPLES_PER_MS;
}

/** The audio without its silent lead-in and tail, so that a pause put between two phrases is the pause. */
export function trimSilence(audio: Int16Array): Int16Array {
  let from = 0;
  let to = audio.length;
  while (from < to && Math.abs(audio[from] as number) < SILENCE_AMPLITUDE) from++;
  while (to > from && Math.abs(audio[to - 1] as number) < SILENCE_AMPLITUDE) to--;
  return audio.slice(from, to);
}

/** Speech by a catalogue voice of the router (eSpeak), trimmed; the same text gives the same samples. */
export async function speech(tts: VoiceRouter, text: string, voiceId = 'local-en-male'): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize({ voiceId, text })) chunks.push(chunk);
  return trimSilence(concat(...chunks));
}

/** Everything the router says for `text`, untrimmed: what the agent's playout receives. */
export async function agentSpeech(tts: VoiceRouter, text: string, voiceId: string, language: string) {
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize({ voiceId, text, language })) chunks.push(chunk);
  return concat(...chunks);
}

/** `sox -n -r 16000 -b 16 -c 1 out.wav synth <args>`: tones as a generator makes them. */
export function sox(...synth: string[]): Int16Array {
  const dir = mkdtempSync(path.join(tmpdir(), 'sox-'));
  try {
    const file = path.join(dir, 'out.wav');
    const run = spawnSync('sox', ['-n', '-r', '16000', '-b', '16', '-c', '1', file, 'synth', ...synth]);
    if (run.status !== 0) throw new Error(`sox failed: ${run.error?.message ?? run.stderr.toString()}`);
    return readWav(readFileSync(file)).channels[0] as Int16Array;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A single steady tone: an answering machine's beep. */
export function beep(seconds: number, hz: number, volume = 0.5): Int16Array {
  return sox(String(seconds), 'sine', String(hz), 'vol', String(volume));
}

/** Two tones at once, as a DTMF key sends (697-941 Hz with 1,209-1,477 Hz). */
export function dualTone(seconds: number, lowHz: number, highHz: number): Int16Array {
  return sox(String(seconds), 'sine', String(lowHz), 'sine', String(highHz), 'remix', '-', 'vol', '0.5');
}

/**
 * A cough-like burst: two voiced pulses (a 160 Hz buzz with harmonics, a little rough with noise), 500 ms in
 * all. A voice activity detector takes it for speech (Silero: 0.97); there are no words in it.
 */
export function coughLike(): Int16Array {
  const pulseMs = 220;
  const gapMs = 60;
  const out = new Int16Array((2 * pulseMs + gapMs) * SAMPLES_PER_MS);
  let seed = 12_345;
  for (let pulse = 0; pulse < 2; pulse++) {
    const start = pulse * (pulseMs + gapMs) * SAMPLES_PER_MS;
    const length = pulseMs * SAMPLES_PER_MS;
    for (let n = 0; n < length; n++) {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      const noise = (seed / 0x7fffffff) * 2 - 1;
      const t = n / CANONICAL_RATE;
      let voiced = 0;
      for (let h = 1; h <= 6; h++) voiced += Math.sin(2 * Math.PI * 160 * h * t) / h;
      const envelope = Math.sin((Math.PI * n) / length);
      out[start + n] = Math.round(9000 * envelope * (voiced + 0.1 * noise));
    }
  }
  return out;
}
