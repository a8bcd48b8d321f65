/**
 * A CPU profile's busy time split by part of a call's work: each sample goes to the innermost frame of its stack
 * that belongs to a part (so an HTTP client's socket write called from the STT provider is the HTTP client's, and
 * the STT provider's parsing called from a socket event is the STT feed's); samples in none go to `rest`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root as profiles name it: rules match paths below it, whatever the checkout is called. */
const ROOT_URL = `file://${path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')}/`;

export const CALL_PARTS = [
  'gateway_transport',
  'vad',
  'stt_feed',
  'tts',
  'resampling',
  'playout',
  'recording',
  'http_clients',
  'simulated_callers',
  'gc',
  'rest',
] as const;

export type CallPart = (typeof CALL_PARTS)[number];

/** By where the code lives (a substring of the frame's URL), checked in this order. */
const RULES: ReadonlyArray<readonly [CallPart, readonly string[]]> = [
  ['vad', ['onnxruntime', '/engines/vad/']],
  ['resampling', ['/codecs/resample']],
  ['tts', ['/engines/tts/', '/pipeline/agent-voice']],
  ['stt_feed', ['/engines/stt/', '/pipeline/stt-feed']],
  ['playout', ['/pipeline/playout']],
  ['recording', ['/pipeline/recorder', '/codecs/wav']],
  ['gateway_transport', ['/gateway/', 'uWebSockets', '/codecs/g711', '/codecs/framing']],
  [
    'http_clients',
    [
      'undici',
      '/node_modules/openai/',
      '/node_modules/ws/',
      'node:net',
      'node:stream_base_commons',
      'node:_http',
      'node:http',
      'node:streams/',
      'node:webstreams/',
      'node:dns',
      'node:tls',
    ],
  ],
  ['simulated_callers', ['/bench/']],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface CallParts {
  /** Sampled time that was not idle. */
  readonly busyMs: number;
  readonly ms: Readonly<Record<CallPart, number>>;
}

function partOfFrame(node: ProfileNode): CallPart | undefined {
  if (node.callFrame.functionName === '(garbage collector)') return 'gc';
  const raw = node.callFrame.url;
  if (raw === '') return undefined;
  const url = raw.startsWith(ROOT_URL) ? `/${raw.slice(ROOT_URL.length)}` : raw;
  for (const [part, places] of RULES) if (places.some((p) => url.includes(p))) return part;
  return undefined;
}

/**
 * `window`, when given, keeps only the samples taken within it, in µs of the monotonic clock that V8's profiler
 * and `process.hrtime` share on Linux (for a profile of a whole process's life, `node --cpu-prof`).
 */
export function callPartsOfProfile(file: string, window?: { fromUs: number; toUs: number }): CallParts {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const partById = new Map<number, CallPart | 'idle'>();
  const partOf = (id: number): CallPart | 'idle' => {
    const known = partById.get(id);
    if (known) return known;
    const leaf = byId.get(id);
    let part: CallPart | 'idle' = 'rest';
    if (leaf?.callFrame.functionName === '(idle)') part = 'idle';
    else {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at);
        const found = node && partOfFrame(node);
        if (found) {
          part = found;
          break;
        }
      }
    }
    partById.set(id, part);
    return part;
  };
  const ms = Object.fromEntries(CALL_PARTS.map((p) => [p, 0])) as Record<CallPart, number>;
  let busyMs = 0;
  const deltas = profile.timeDeltas;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += deltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    // A sample stands for the time until the next one.
    const sampleMs = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    const part = partOf(profile.samples[i]!);
    if (part === 'idle') continue;
    ms[part] += sampleMs;
    busyMs += sampleMs;
  }
  return { busyMs, ms };
}
