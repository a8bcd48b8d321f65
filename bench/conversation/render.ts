/**
 * The caller's audio of a case, PCM16 16 kHz: eSpeak NG speech (pauses inside an utterance shortened, so one
 * scripted utterance is one stretch of voice, as a person says a short phrase), silence and noise bursts.
 */
import { CANONICAL_RATE } from '../../codecs/index.ts';
import { espeak, silence } from '../../engines/stt/testing/speech.ts';
import { meanAbs } from '../../engines/stt/testing/voice-windows.ts';
import type { ConversationCase, Part } from './corpus.ts';

const WINDOW = 320;
/** Mean absolute amplitude of a 20 ms window counted as voice when trimming and shortening pauses. */
const VOICE_LEVEL = 300;
/** Longest pause kept inside an utterance. */
const MAX_INNER_PAUSE_MS = 100;
const WORDS_PER_MINUTE = 165;

export interface RenderedPart {
  part: Part;
  audio: Int16Array;
  /** What the caller's STT should hear for this part: words, '' for noise, null for silence. */
  utterance: { text: string; voicedMs: number } | null;
}

export function renderCase(c: ConversationCase, seed: number): RenderedPart[] {
  return c.parts.map((part, i) => renderPart(part, seed * 31 + i));
}

function renderPart(part: Part, seed: number): RenderedPart {
  if ('pauseMs' in part) return { part, audio: silence(part.pauseMs), utterance: null };
  if ('noise' in part) {
    const audio = noise(part.noise, part.ms, seed);
    return { part, audio, utterance: { text: '', voicedMs: part.ms } };
  }
  const audio = tighten(espeak(part.speech, { voice: part.voice, wordsPerMinute: WORDS_PER_MINUTE }));
  return { part, audio, utterance: { text: part.speech, voicedMs: (audio.length / CANONICAL_RATE) * 1000 } };
}

/** Leading and trailing silence cut, inner pauses shortened to `MAX_INNER_PAUSE_MS`. */
export function tighten(audio: Int16Array): Int16Array {
  const windows = Math.floor(audio.length / WINDOW);
  const kept: Int16Array[] = [];
  const maxQuiet = MAX_INNER_PAUSE_MS / 20;
  let quietRun = 0;
  let started = false;
  let pendingQuiet: Int16Array[] = [];
  for (let w = 0; w < windows; w++) {
    const window = audio.subarray(w * WINDOW, (w + 1) * WINDOW);
    const loud = meanAbs(window) >= VOICE_LEVEL;
    if (!loud) {
      if (!started) continue;
      quietRun++;
      if (quietRun <= maxQuiet) pendingQuiet.push(window);
      continue;
    }
    started = true;
    kept.push(...pendingQuiet, window);
    pendingQuiet = [];
    quietRun = 0;
  }
  const out = new Int16Array(kept.reduce((n, k) => n + k.length, 0));
  let at = 0;
  for (const k of kept) {
    out.set(k, at);
    at += k.length;
  }
  return out;
}

/** A noise burst: `cough`, broadband with a fast attack and decay; `line`, flat hiss. Deterministic per seed. */
export function noise(kind: 'cough' | 'line', ms: number, seed: number): Int16Array {
  const out = new Int16Array((ms * CANONICAL_RATE) / 1000);
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let n = 0; n < out.length; n++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    const white = state / 0xffffffff - 0.5;
    const t = n / out.length;
    const envelope = kind === 'cough' ? Math.min(1, t * 20) * Math.exp(-4 * t) : 1;
    out[n] = Math.round(white * (kind === 'cough' ? 16000 : 6000) * envelope);
  }
  return out;
}
