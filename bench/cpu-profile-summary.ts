/**
 * Where a CPU profile's time went: self time by function and by place (`bench/pipeline-profile.ts`), and with
 * `--interval` a timeline of busy time per interval by place, which tells a steady cost from the bursts that
 * make a loaded event loop late.
 *
 *   node --import tsx bench/cpu-profile-summary.ts FILE.cpuprofile [--top 15] [--interval 2] [--root DIR]
 *
 * FILE is what `node --cpu-prof` writes, or `bench:pipeline --cpu-prof`. `--root` is the checkout the profiled
 * code ran from (default: this one), so that its files are named relative to it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatProfile, summarizeProfile } from './pipeline-profile.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What a sample's stack is spending time on: the innermost of these places on it, else the leaf's own. */
const PLACES: ReadonlyArray<[label: string, urlPart: string]> = [
  ['onnxruntime', 'onnxruntime'],
  ['resampler', '/codecs/resample'],
  ['stt', '/engines/stt/'],
  ['llm+tts http', '/openai/'],
  ['llm+tts http', 'undici'],
  ['vad', '/engines/vad/'],
  ['pipeline', '/pipeline/'],
];

function placeOf(stack: ProfileNode[]): string {
  const leaf = stack[0]?.callFrame.functionName ?? '';
  if (leaf === '(idle)') return 'idle';
  if (leaf === '(garbage collector)') return 'gc';
  for (const node of stack) {
    for (const [label, urlPart] of PLACES) if (node.callFrame.url.includes(urlPart)) return label;
  }
  return 'other';
}

/** Per interval: the share of wall time each place took (idle included). */
function timeline(file: string, intervalS: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const placeById = new Map<number, string>();
  for (const node of profile.nodes) {
    const stack: ProfileNode[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id);
      if (frame) stack.push(frame);
    }
    placeById.set(node.id, placeOf(stack));
  }
  const intervals: Array<Map<string, number>> = [];
  let atUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i] ?? 0;
    const index = Math.floor(atUs / (intervalS * 1e6));
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const place = placeById.get(profile.samples[i] as number) ?? 'other';
    const interval = intervals[index] ?? new Map<string, number>();
    intervals[index] = interval;
    interval.set(place, (interval.get(place) ?? 0) + ms);
  }
  const columns = [...new Set([...PLACES.map(([label]) => label), 'gc', 'other', 'idle'])];
  const lines = [`  share of each ${intervalS} s by place: ${columns.join(' | ')}`];
  intervals.forEach((interval, index) => {
    const shares = columns.map((c) => `${((100 * (interval.get(c) ?? 0)) / (intervalS * 1000)).toFixed(0)}%`);
    lines.push(`    ${String(index * intervalS).padStart(4)} s  ${shares.join(' ')}`);
  });
  return lines;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '15' },
      interval: { type: 'string' },
      root: { type: 'string' },
    },
    strict: true,
  });
  const file = positionals[0];
  if (!file)
    throw new Error('usage: cpu-profile-summary.ts FILE.cpuprofile [--top N] [--interval S] [--root DIR]');
  const top = Number(values.top);
  if (!Number.isInteger(top) || top < 1)
    throw new Error(`--top: expected a positive integer, got ${values.top}`);
  const root = path.resolve(values.root ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  for (const line of formatProfile(summarizeProfile(file, root, top))) console.log(line);
  if (values.interval !== undefined) {
    const intervalS = Number(values.interval);
    if (!(intervalS > 0)) throw new Error(`--interval: expected seconds > 0, got ${values.interval}`);
    for (const line of timeline(file, intervalS)) console.log(line);
  }
}

main();
