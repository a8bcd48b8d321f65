import { resampleWhole } from './recording.ts';

/**
 * Two speakers told apart in a mono recording, by their voices. Each turn (a stretch of speech the VAD cut) is
 * described by two voice features measured on 8 kHz audio in 32 ms frames every 32 ms, over the frames within
 * 25 dB of the turn's loudest:
 *
 * - pitch: the median fundamental frequency of its voiced frames (normalised autocorrelation peak above 0.45 at a
 *   lag of 60-400 Hz), on a log scale (so a 20% difference is the same for low and high voices);
 * - brightness: the mean zero-crossing rate of the frames (a cheap stand-in for the spectral centroid).
 *
 * The turns are clustered into two groups by k-means on the standardised features (pitch weighted twice),
 * started from the lowest- and highest-pitched turns. Two speakers are reported only when the clusters are
 * clearly apart: both have a turn, their median pitches differ by at least 15% (about 2.5 semitones) and the
 * gap between the cluster means is at least twice the pooled spread within them. Otherwise the recording has one
 * speaker as far as this method can tell (`separated: false`). Turns without a voiced frame join the cluster of
 * the turn before them. `speaker_1` is whoever speaks first.
 */
export interface SpeakerSeparation {
  separated: boolean;
  /** Per turn, in the order given: 0 or 1. */
  labels: number[];
}

const RATE = 8000;
const FRAME = 256;
const MIN_LAG = Math.floor(RATE / 400);
const MAX_LAG = Math.ceil(RATE / 60);
const VOICED_CORRELATION = 0.45;
const LOUDEST_WITHIN = 10 ** (-25 / 20);
const MIN_PITCH_RATIO = Math.log(1.15);
const PITCH_WEIGHT = 2;

interface TurnVoice {
  logPitch: number | undefined;
  crossings: number;
}

export function separateSpeakers(
  samples: Int16Array,
  sampleRate: number,
  turns: ReadonlyArray<readonly [number, number]>,
): SpeakerSeparation {
  const one = { separated: false, labels: turns.map(() => 0) };
  if (turns.length < 2) return one;
  const audio = toRate(samples, sampleRate);
  const voices = turns.map(([startMs, endMs]) =>
    voiceOf(audio.subarray(Math.floor((startMs * RATE) / 1000), Math.ceil((endMs * RATE) / 1000))),
  );
  const voiced = voices.flatMap((v, i) => (v.logPitch === undefined ? [] : [i]));
  if (voiced.length < 2) return one;
  const pitch = standardise(voiced.map((i) => voices[i]!.logPitch!));
  const bright = standardise(voiced.map((i) => voices[i]!.crossings));
  const points = voiced.map((_, k) => [pitch.values[k]! * PITCH_WEIGHT, bright.values[k]!] as const);
  const cluster = kMeans(points, pitch.values);
  const groups = [0, 1].map((c) => voiced.filter((_, k) => cluster[k] === c));
  if (groups.some((g) => g.length === 0)) return one;
  const medians = groups.map((g) => median(g.map((i) => voices[i]!.logPitch!)));
  const pitchGap = Math.abs(medians[0]! - medians[1]!);
  const spread = pooledSpread(groups.map((g) => g.map((i) => voices[i]!.logPitch!)));
  if (pitchGap < MIN_PITCH_RATIO || pitchGap < 2 * spread) return one;
  const labelOf = new Map(voiced.map((i, k) => [i, cluster[k]!]));
  const labels: number[] = [];
  for (let i = 0; i < turns.length; i++) labels.push(labelOf.get(i) ?? labels[i - 1] ?? 0);
  // Whoever speaks first is speaker_1.
  const first = labels[0] ?? 0;
  return { separated: true, labels: labels.map((l) => (l === first ? 0 : 1)) };
}

function toRate(samples: Int16Array, rate: number): Int16Array {
  return resampleWhole(samples, rate, RATE);
}

function voiceOf(turn: Int16Array): TurnVoice {
  const frames: Float64Array[] = [];
  const energies: number[] = [];
  for (let at = 0; at + FRAME <= turn.length; at += FRAME) {
    const frame = new Float64Array(FRAME);
    let mean = 0;
    for (let n = 0; n < FRAME; n++) mean += turn[at + n]!;
    mean /= FRAME;
    let energy = 0;
    for (let n = 0; n < FRAME; n++) {
      frame[n] = turn[at + n]! - mean;
      energy += frame[n]! * frame[n]!;
    }
    frames.push(frame);
    energies.push(Math.sqrt(energy / FRAME));
  }
  const loudest = Math.max(0, ...energies);
  const pitches: number[] = [];
  let crossings = 0;
  let counted = 0;
  for (const [k, frame] of frames.entries()) {
    if (loudest === 0 || energies[k]! < loudest * LOUDEST_WITHIN) continue;
    let zc = 0;
    for (let n = 1; n < FRAME; n++) if (frame[n - 1]! < 0 !== frame[n]! < 0) zc++;
    crossings += zc / FRAME;
    counted++;
    const f0 = pitchOf(frame);
    if (f0 !== undefined) pitches.push(Math.log(f0));
  }
  return {
    logPitch: pitches.length > 0 ? median(pitches) : undefined,
    crossings: counted > 0 ? crossings / counted : 0,
  };
}

/** The fundamental frequency of a frame in Hz, or undefined when it is not voiced. */
function pitchOf(frame: Float64Array): number | undefined {
  let best = 0;
  let bestLag = 0;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let cross = 0;
    let a = 0;
    let b = 0;
    for (let n = 0; n + lag < FRAME; n++) {
      const x = frame[n]!;
      const y = frame[n + lag]!;
      cross += x * y;
      a += x * x;
      b += y * y;
    }
    const r = a > 0 && b > 0 ? cross / Math.sqrt(a * b) : 0;
    if (r > best) {
      best = r;
      bestLag = lag;
    }
  }
  return best >= VOICED_CORRELATION ? RATE / bestLag : undefined;
}

function standardise(values: number[]): { values: number[] } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length) || 1;
  return { values: values.map((v) => (v - mean) / sd) };
}

/** Two clusters, started from the points of lowest and highest `order`. */
function kMeans(points: ReadonlyArray<readonly [number, number]>, order: number[]): number[] {
  const low = order.indexOf(Math.min(...order));
  const high = order.indexOf(Math.max(...order));
  let centres: Array<[number, number]> = [
    [points[low]![0], points[low]![1]],
    [points[high]![0], points[high]![1]],
  ];
  let labels = points.map(() => 0);
  for (let round = 0; round < 50; round++) {
    const next = points.map((p) => (distance(p, centres[0]!) <= distance(p, centres[1]!) ? 0 : 1));
    const same = next.every((l, i) => l === labels[i]);
    labels = next;
    centres = [0, 1].map((c) => {
      const members = points.filter((_, i) => labels[i] === c);
      if (members.length === 0) return centres[c]!;
      return [
        members.reduce((s, p) => s + p[0], 0) / members.length,
        members.reduce((s, p) => s + p[1], 0) / members.length,
      ];
    }) as Array<[number, number]>;
    if (same && round > 0) break;
  }
  return labels;
}

function distance(a: readonly [number, number], b: readonly [number, number]): number {
  return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The standard deviation within groups, pooled. */
function pooledSpread(groups: number[][]): number {
  let sum = 0;
  let count = 0;
  for (const group of groups) {
    const mean = group.reduce((s, v) => s + v, 0) / group.length;
    for (const v of group) sum += (v - mean) ** 2;
    count += group.length;
  }
  return Math.sqrt(sum / Math.max(1, count));
}
