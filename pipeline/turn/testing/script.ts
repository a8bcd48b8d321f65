import type { SegmentEvent } from '../../../engines/vad/segmenter.ts';

/**
 * Scripts for turn-taking tests: caller speech, transcripts, agent replies and time, as the pipeline feeds
 * them. VAD events carry the segmenter's decision delays (upstream Silero defaults), so `speechStart(1000)`
 * is decided at 1250 and `speechEnd(2000)` at 2100.
 */

/** minSpeechMs: a speech start is known this long after it began. */
export const START_DECISION_MS = 250;
/** minSilenceMs: a speech end is known this long after the silence began. */
export const END_DECISION_MS = 100;

export type Step =
  | { kind: 'vad'; event: SegmentEvent }
  | { kind: 'partial'; atMs: number; text: string }
  | { kind: 'final'; atMs: number; text: string; endOfTurn: boolean }
  | { kind: 'agent_start'; atMs: number; interruptible: boolean }
  | { kind: 'agent_stop'; atMs: number }
  /** The caller's turn was taken (its words are in). */
  | { kind: 'turn_taken'; atMs: number }
  | { kind: 'tick'; atMs: number }
  /** The VAD heard voice in the window ending here. */
  | { kind: 'voiced'; atMs: number };

let lastStart = 0;

/** `decidedAfterMs`: when the VAD tells, after the speech began (later than `minSpeechMs` for a VAD behind). */
export function speechStart(atMs: number, decidedAfterMs = START_DECISION_MS): Step {
  lastStart = atMs;
  return { kind: 'vad', event: { type: 'speech_start', atMs, decidedAtMs: atMs + decidedAfterMs } };
}

export function speechEnd(atMs: number, startMs = lastStart): Step {
  return { kind: 'vad', event: { type: 'speech_end', atMs, startMs, decidedAtMs: atMs + END_DECISION_MS } };
}

export const partial = (atMs: number, text: string): Step => ({ kind: 'partial', atMs, text });
export const final = (atMs: number, text: string, endOfTurn = false): Step => ({
  kind: 'final',
  atMs,
  text,
  endOfTurn,
});
export const agentStart = (atMs: number, interruptible = true): Step => ({
  kind: 'agent_start',
  atMs,
  interruptible,
});
export const agentStop = (atMs: number): Step => ({ kind: 'agent_stop', atMs });
export const tick = (atMs: number): Step => ({ kind: 'tick', atMs });

/** Voiced VAD windows (32 ms, Silero's) from `fromMs` up to `toMs`. */
export function voicedWindows(fromMs: number, toMs: number): Step[] {
  const steps: Step[] = [];
  for (let atMs = fromMs + 32; atMs <= toMs; atMs += 32) steps.push({ kind: 'voiced', atMs });
  return steps;
}
export const turnTaken = (atMs: number): Step => ({ kind: 'turn_taken', atMs });

/** When a step reaches the state machine. */
export function stepTime(step: Step): number {
  return step.kind === 'vad' ? step.event.decidedAtMs : step.atMs;
}

/** Steps in the order they reach the state machine (stable for equal times). */
export function inOrder(steps: readonly Step[]): Step[] {
  return steps
    .map((step, i) => ({ step, i }))
    .sort((a, b) => stepTime(a.step) - stepTime(b.step) || a.i - b.i)
    .map((x) => x.step);
}
