import { parseArgs } from 'node:util';

export const USAGE = `npm run bench:calls -- [--json] [--runs 3] [--calls 100] [--concurrency 32] [--duration 10]
                       [--warmup 2] [--workspaces N] [--deadline 420] [--only admissions|conversations|pool]
                       [--engines fake|configured] [--timeline]
                       [--no-cpu-parts] [--max-calls N]`;

export type Part = 'admissions' | 'conversations' | 'pool';
/**
 * The conversational calls' engines: `fake`, fixed-latency remote engines in their own process; `configured`,
 * what this environment's LLM_*, STT_* and TTS_* settings say (by default local PocketSphinx, the scripted
 * model and eSpeak NG).
 */
export type EngineChoice = 'fake' | 'configured';

export interface BenchOptions {
  root: string;
  json: boolean;
  runs: number;
  /** Conversational calls placed at once per run. */
  calls: number;
  /** Admissions: requests in flight at once. */
  concurrency: number;
  durationS: number;
  warmupS: number;
  /** Admissions: workspaces to spread the keys over; undefined sizes them from the window. */
  workspaces: number | undefined;
  /** Conversations: how long after placing the calls they all must have ended. */
  deadlineS: number;
  startTimeoutS: number;
  parts: readonly Part[];
  engines: EngineChoice;
  /** Conversations: a progress line (live, ended, CPU) at every poll instead of every 15 s. */
  timeline: boolean;
  /** Conversations: profile the measured process to split its CPU by part (off with --no-cpu-parts). */
  cpuParts: boolean;
  /** Conversations: the gateway's `GATEWAY_MAX_CALLS`; undefined leaves the node its default. */
  maxCalls: number | undefined;
}

function positive(name: string, text: string | undefined, fallback: number, integer: boolean): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name}: expected a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
}

function partsOf(only: string | undefined): Part[] {
  if (only === undefined) return ['admissions', 'conversations', 'pool'];
  if (only === 'admissions' || only === 'conversations' || only === 'pool') return [only];
  throw new Error(`--only: expected admissions, conversations or pool, got "${only}"`);
}

function enginesOf(text: string | undefined): EngineChoice {
  if (text === undefined || text === 'fake' || text === 'configured') return text ?? 'fake';
  throw new Error(`--engines: expected fake or configured, got "${text}"`);
}

export function parseOptions(argv: string[], root: string): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      runs: { type: 'string' },
      calls: { type: 'string' },
      concurrency: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      workspaces: { type: 'string' },
      deadline: { type: 'string' },
      only: { type: 'string' },
      engines: { type: 'string' },
      timeline: { type: 'boolean', default: false },
      'no-cpu-parts': { type: 'boolean', default: false },
      'max-calls': { type: 'string' },
    },
    strict: true,
  });
  return {
    root,
    json: values.json === true,
    runs: positive('runs', values.runs, 3, true),
    calls: positive('calls', values.calls, 100, true),
    concurrency: positive('concurrency', values.concurrency, 32, true),
    durationS: positive('duration', values.duration, 10, false),
    warmupS: positive('warmup', values.warmup, 2, false),
    workspaces:
      values.workspaces === undefined ? undefined : positive('workspaces', values.workspaces, 1, true),
    deadlineS: positive('deadline', values.deadline, 420, false),
    startTimeoutS: 90,
    parts: partsOf(values.only),
    engines: enginesOf(values.engines),
    timeline: values.timeline === true,
    cpuParts: values['no-cpu-parts'] !== true,
    maxCalls:
      values['max-calls'] === undefined ? undefined : positive('max-calls', values['max-calls'], 1, true),
  };
}
