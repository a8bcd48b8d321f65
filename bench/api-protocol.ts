/**
 * Messages between `bench/api.ts` (the parent) and its two children: the server under test
 * (`bench/api-server.ts`) and the load generator (`bench/api-loadgen.ts`). They travel over the Node IPC
 * channel that `child_process.fork` opens, so a child also learns when its parent has gone (`disconnect`).
 */

/** CPU time of one process (µs, from `process.cpuUsage()`) at a monotonic wall time (ms). */
export interface CpuSample {
  userUs: number;
  systemUs: number;
  wallMs: number;
}

// --- server child ----------------------------------------------------------------------------------------

export type ToServer = { type: 'cpu'; id: number } | { type: 'stop' };

export type FromServer =
  | { type: 'ready'; url: string; apiKey: string; pid: number }
  | { type: 'cpu'; id: number; sample: CpuSample }
  | { type: 'error'; message: string };

// --- load generator child --------------------------------------------------------------------------------

export interface LoadSpec {
  /** `http://127.0.0.1:<port>`; the load generator refuses any other host. */
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  /** 2xx responses completed inside the measured window. */
  ok: number;
  /** Non-2xx responses and failed requests inside the measured window. */
  errors: number;
  /** Status code (or `error:<code>` for a failed request) -> count, measured window only. */
  statuses: Record<string, number>;
  /** The first non-2xx body (truncated) seen during warm-up or measurement, to say what went wrong. */
  firstErrorBody: string | undefined;
  windowMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Load generator CPU over the measured window, percent of one core. */
  cpuPct: number;
}

export type ToLoadgen = { type: 'run'; spec: LoadSpec } | { type: 'stop' };

export type FromLoadgen =
  | { type: 'ready' }
  | { type: 'measure-start' }
  | { type: 'measure-end' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; message: string };

export function cpuSample(): CpuSample {
  const usage = process.cpuUsage();
  return { userUs: usage.user, systemUs: usage.system, wallMs: performance.now() };
}

/** CPU used between two samples of the same process, as percent of one core. */
export function cpuPct(from: CpuSample, to: CpuSample): number {
  const wallUs = (to.wallMs - from.wallMs) * 1000;
  if (wallUs <= 0) return 0;
  return (100 * (to.userUs - from.userUs + (to.systemUs - from.systemUs))) / wallUs;
}

/** Sends a message to the parent; false when the channel has already closed. */
export function sendToParent(message: FromServer | FromLoadgen): boolean {
  if (!process.send || !process.connected) return false;
  return process.send(message);
}
