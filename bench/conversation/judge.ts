/**
 * How `bench:conversation` judges a call, by what the caller heard (pure: tested on its own).
 * - `endpoint`, `connective_pause`: the reply must start after the caller's last word (not in a pause) and
 *   within `REPLY_WITHIN_MS`; its latency is from the caller's last word to the reply's first sound.
 * - `bargein`, `bargein_stop_phrase`: the agent's voice must stop within `STOP_WITHIN_MS` of the caller's
 *   first sound: a `clear`, or the audio running out and staying out for `STOP_SILENCE_MS` (a held reply);
 *   the stop time is from that sound to whichever came first.
 * - `backchannel`, `noise` over the agent: no `clear`, the agent still heard after the caller's sound, and no
 *   gap in its voice over `GAP_LIMIT_MS` around it.
 * - `noise` while the agent is quiet, `silence`: the agent says nothing.
 */
import { CATEGORIES, type Category } from './corpus.ts';
import type { Interval } from './web-caller.ts';

export const REPLY_WITHIN_MS = 2500;
export const STOP_WITHIN_MS = 1000;
export const GAP_LIMIT_MS = 100;
/** Silence in the agent's voice that counts as stopped (the agent's answer may follow it). */
export const STOP_SILENCE_MS = 300;
/** How long after the caller's sound a gap in the agent's voice counts as caused by it. */
export const GAP_WINDOW_MS = 2500;

export interface CaseObservation {
  id: string;
  category: Category;
  /** Whether the caller's sound came while the agent was talking. */
  overAgent: boolean;
  /** When the caller's script began (its first part, a pause included). */
  beganMs: number;
  /** The caller's speech and noise as sent (pauses excluded), in order. */
  sounds: Interval[];
  heard: Interval[];
  clears: number[];
  /**
   * When the caller's words first reached the platform (the STT's first interim or final with words, as the
   * call's live events relay it) at or after the caller's first sound: the earliest a stop on words can come.
   */
  firstWordAtMs?: number;
  /** The run failed before it could be judged (the call did not connect, ...). */
  error?: string;
}

export interface Verdict {
  /** Longest gap in the agent's voice before the caller's first sound (cases over the agent). */
  undisturbedGapMs?: number;
  id: string;
  category: Category;
  correct: boolean;
  why: string;
  responseLatencyMs?: number;
  stopMs?: number;
  /** Barge-ins: from the caller's first sound to their first word from the STT. */
  firstWordMs?: number;
  gapMs?: number;
}

export function judge(o: CaseObservation): Verdict {
  const onset = o.sounds[0]?.startMs;
  const base = {
    id: o.id,
    category: o.category,
    ...(o.overAgent && onset !== undefined && !o.error
      ? { undisturbedGapMs: maxGap(o.heard, Number.NEGATIVE_INFINITY, onset) }
      : {}),
  };
  if (o.error) return { ...base, correct: false, why: `error: ${o.error}` };
  const first = o.sounds[0];
  const last = o.sounds.at(-1);
  if (!first || !last) {
    const spoke = o.heard.find((i) => i.endMs > o.beganMs);
    return { ...base, correct: !spoke, why: spoke ? 'agent spoke' : 'quiet' };
  }
  const startMs = first.startMs;
  const endMs = last.endMs;
  switch (o.category) {
    case 'endpoint':
    case 'connective_pause': {
      const reply = o.heard.find((i) => i.startMs >= startMs);
      if (!reply) return { ...base, correct: false, why: 'no reply' };
      const responseLatencyMs = reply.startMs - endMs;
      if (responseLatencyMs < 0)
        return { ...base, correct: false, why: 'answered before the caller finished', responseLatencyMs };
      const inTime = responseLatencyMs <= REPLY_WITHIN_MS;
      return { ...base, correct: inTime, why: inTime ? 'answered' : 'answered late', responseLatencyMs };
    }
    case 'bargein':
    case 'bargein_stop_phrase': {
      const word = o.firstWordAtMs === undefined ? {} : { firstWordMs: o.firstWordAtMs - startMs };
      const stoppedAt = stopTime(o.heard, o.clears, startMs);
      if (stoppedAt === undefined) return { ...base, ...word, correct: false, why: 'agent not stopped' };
      const stopMs = stoppedAt - startMs;
      const inTime = stopMs <= STOP_WITHIN_MS;
      return { ...base, ...word, correct: inTime, why: inTime ? 'stopped' : 'stopped late', stopMs };
    }
    case 'backchannel':
    case 'noise':
    case 'silence': {
      if (!o.overAgent) {
        const spoke = o.heard.find((i) => i.endMs > startMs);
        return { ...base, correct: !spoke, why: spoke ? 'agent spoke' : 'quiet' };
      }
      const gapMs = maxGap(o.heard, startMs, endMs + GAP_WINDOW_MS);
      if (o.clears.some((t) => t >= startMs)) return { ...base, correct: false, why: 'agent stopped', gapMs };
      if (!o.heard.some((i) => i.endMs > endMs))
        return { ...base, correct: false, why: 'agent went quiet', gapMs };
      const gapless = gapMs <= GAP_LIMIT_MS;
      return { ...base, correct: gapless, why: gapless ? 'kept talking' : 'gap in the agent', gapMs };
    }
  }
}

/** When the agent's voice stopped after `fromMs`: a `clear`, or the end of a stretch silence follows. */
export function stopTime(
  heard: readonly Interval[],
  clears: readonly number[],
  fromMs: number,
): number | undefined {
  const clear = clears.find((t) => t >= fromMs);
  let quiet: number | undefined;
  for (let i = 0; i < heard.length; i++) {
    const stretch = heard[i] as Interval;
    if (stretch.endMs < fromMs) continue;
    const next = heard[i + 1];
    if (!next || next.startMs - stretch.endMs >= STOP_SILENCE_MS) {
      quiet = stretch.endMs;
      break;
    }
  }
  if (clear === undefined) return quiet;
  return quiet === undefined ? clear : Math.min(clear, quiet);
}

/**
 * The longest silence between stretches of agent audio that overlaps [fromMs, toMs]; a stretch still to come
 * after the last one heard does not count (the agent may simply have finished).
 */
export function maxGap(heard: readonly Interval[], fromMs: number, toMs: number): number {
  let max = 0;
  for (let i = 1; i < heard.length; i++) {
    const gapStart = (heard[i - 1] as Interval).endMs;
    const gapEnd = (heard[i] as Interval).startMs;
    if (gapEnd > fromMs && gapStart < toMs) max = Math.max(max, gapEnd - gapStart);
  }
  return max;
}

export interface ConversationSummary {
  cases: number;
  correct_pct: Record<Category | 'overall', number | null>;
  response_latency_p50_ms: number | null;
  response_latency_p95_ms: number | null;
  bargein_stop_p50_ms: number | null;
  bargein_stop_p95_ms: number | null;
  /**
   * From the caller's first sound to the STT's first word, over the barge-ins: the floor of a stop decided on
   * words (a stop sooner than this was decided on voice alone).
   */
  bargein_first_word_p50_ms: number | null;
  bargein_first_word_p95_ms: number | null;
  backchannel_gap_max_ms: number | null;
  /**
   * The control: the longest gap in the agent's voice before the caller made a sound, over every case where
   * the caller spoke over it. Gaps the platform leaves on its own (a loaded machine) show here too.
   */
  undisturbed_gap_max_ms: number | null;
  /** Barge-ins that never stopped the agent (they have no stop time). */
  bargein_not_stopped: number;
}

export function summarize(verdicts: readonly Verdict[]): ConversationSummary {
  const pct = (vs: readonly Verdict[]): number | null =>
    vs.length === 0 ? null : Math.round((1000 * vs.filter((v) => v.correct).length) / vs.length) / 10;
  const correct = { overall: pct(verdicts) } as Record<Category | 'overall', number | null>;
  for (const c of CATEGORIES) correct[c] = pct(verdicts.filter((v) => v.category === c));
  const latencies = verdicts.flatMap((v) =>
    v.responseLatencyMs !== undefined && v.correct ? [v.responseLatencyMs] : [],
  );
  const bargeins = verdicts.filter((v) => v.category === 'bargein' || v.category === 'bargein_stop_phrase');
  const stops = bargeins.flatMap((v) => (v.stopMs === undefined ? [] : [v.stopMs]));
  const firstWords = bargeins.flatMap((v) => (v.firstWordMs === undefined ? [] : [v.firstWordMs]));
  const gaps = verdicts.flatMap((v) =>
    v.category === 'backchannel' && v.gapMs !== undefined ? [v.gapMs] : [],
  );
  const undisturbed = verdicts.flatMap((v) => (v.undisturbedGapMs === undefined ? [] : [v.undisturbedGapMs]));
  return {
    cases: verdicts.length,
    correct_pct: correct,
    response_latency_p50_ms: percentileOf(latencies, 50),
    response_latency_p95_ms: percentileOf(latencies, 95),
    bargein_stop_p50_ms: percentileOf(stops, 50),
    bargein_stop_p95_ms: percentileOf(stops, 95),
    bargein_first_word_p50_ms: percentileOf(firstWords, 50),
    bargein_first_word_p95_ms: percentileOf(firstWords, 95),
    backchannel_gap_max_ms: gaps.length === 0 ? null : Math.round(Math.max(...gaps)),
    undisturbed_gap_max_ms: undisturbed.length === 0 ? null : Math.round(Math.max(...undisturbed)),
    bargein_not_stopped: bargeins.length - stops.length,
  };
}

/** Nearest-rank percentile, rounded to the ms; null for no values. */
export function percentileOf(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return Math.round(sorted[rank - 1] as number);
}
