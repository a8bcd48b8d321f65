/**
 * Reads a V8 CPU profile (`.cpuprofile`, as the inspector's `Profiler.stop` returns it) and tells where the
 * time went: self time by function, and self and inclusive time by where the code lives (a package under
 * node_modules, a file of this project, Node's internals, or V8's own buckets: GC, idle, program).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Cost {
  name: string;
  ms: number;
  /** Share of the busy time (everything but idle), percent. */
  pct: number;
}

export interface ProfileSummary {
  sampledMs: number;
  idleMs: number;
  busyMs: number;
  selfByFunction: Cost[];
  selfByPlace: Cost[];
  inclusiveByPlace: Cost[];
}

/** Where a frame's code lives: a package, a project file, a Node internal module, or a V8 bucket. */
function place(frame: CallFrame, root: string): string {
  const url = frame.url;
  if (url === '') {
    const name = frame.functionName;
    return name.startsWith('(') ? name : '(native)';
  }
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:');
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? file);
  }
  return path.relative(root, file) || file;
}

/** `name place:line`; native code is named by its JavaScript caller (`(native) <- caller place`). */
function describe(node: ProfileNode, where: string, caller: ProfileNode | undefined, root: string): string {
  const frame = node.callFrame;
  const name = frame.functionName || '(anonymous)';
  if (frame.url)
    return frame.lineNumber > 0 ? `${name} ${where}:${frame.lineNumber + 1}` : `${name} ${where}`;
  if (where.startsWith('(') && where !== '(native)') return name;
  // V8 may give a native function another addon's name: the JavaScript caller says what it is.
  if (!caller) return '(native)';
  const by = caller.callFrame;
  const byName = by.functionName || '(anonymous)';
  const byPlace = by.url && by.lineNumber > 0 ? `${place(by, root)}:${by.lineNumber + 1}` : place(by, root);
  return `(native) <- ${byName} ${byPlace}`;
}

function top(map: Map<string, number>, busyMs: number, count: number): Cost[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, ms]) => ({ name, ms, pct: busyMs > 0 ? (100 * ms) / busyMs : 0 }));
}

export function summarizeProfile(file: string, root: string, count = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const selfByFunction = new Map<string, number>();
  const selfByPlace = new Map<string, number>();
  const inclusiveByPlace = new Map<string, number>();
  let sampledMs = 0;
  let idleMs = 0;
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample stands for the time until the next one.
    const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    const node = byId.get(profile.samples[i] as number);
    if (!node) continue;
    sampledMs += ms;
    const where = place(node.callFrame, root);
    if (where === '(idle)') {
      idleMs += ms;
      continue;
    }
    const key = describe(node, where, byId.get(parent.get(node.id) ?? -1), root);
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + ms);
    selfByPlace.set(where, (selfByPlace.get(where) ?? 0) + ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id);
      if (!frame || frame.callFrame.functionName === '(root)') continue;
      seen.add(place(frame.callFrame, root));
    }
    for (const p of seen) inclusiveByPlace.set(p, (inclusiveByPlace.get(p) ?? 0) + ms);
  }
  const busyMs = sampledMs - idleMs;
  return {
    sampledMs,
    idleMs,
    busyMs,
    selfByFunction: top(selfByFunction, busyMs, count),
    selfByPlace: top(selfByPlace, busyMs, count),
    inclusiveByPlace: top(inclusiveByPlace, busyMs, count),
  };
}

export function formatProfile(summary: ProfileSummary): string[] {
  const lines = [
    `profiled ${(summary.sampledMs / 1000).toFixed(1)} s: busy ${(summary.busyMs / 1000).toFixed(1)} s, idle ${(summary.idleMs / 1000).toFixed(1)} s`,
  ];
  const block = (title: string, costs: Cost[]) => {
    lines.push(`  ${title}`);
    for (const c of costs) {
      lines.push(`    ${c.pct.toFixed(1).padStart(5)}%  ${c.ms.toFixed(0).padStart(7)} ms  ${c.name}`);
    }
  };
  block('self time by function (share of busy time)', summary.selfByFunction);
  block('self time by place', summary.selfByPlace);
  block('inclusive time by place (on the stack)', summary.inclusiveByPlace);
  return lines;
}
