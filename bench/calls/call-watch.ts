import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { OPEN_CALL_STATUSES } from '../../core/store/call-types.ts';
import { type BenchWorkspace, callBody } from './workspaces.ts';

/**
 * Places the conversational calls all at once and follows them to their end. Following reads each workspace's
 * call list (`GET /v2/calls`, one request per workspace and poll) rather than each call, so the watching adds
 * about one request per workspace a second to the process under measurement, not one per call.
 */

const POLL_MS = 1_000;
const ERROR_TEXT_CHARS = 300;

export interface LatencyFigures {
  endpoint_ms?: number;
  stt_final_ms?: number;
  llm_first_token_ms?: number;
  tts_first_audio_ms?: number;
  voice_to_voice_ms?: number;
  pipeline_overhead_ms?: number;
}

/** The fields of a call object (`GET /v2/calls/{id}`) the benchmark reads. */
export interface CallView {
  id: string;
  status: string;
  ended_reason: string | null;
  duration_secs: number;
  latency: { turns?: number; p50?: LatencyFigures; p95?: LatencyFigures } | null;
}

export interface PlacedCall {
  id: string;
  workspace: BenchWorkspace;
}

export interface Placement {
  placed: PlacedCall[];
  /** Refused `POST /v2/calls` by status, and the first refusal's text. */
  refused: Record<string, number>;
  firstRefusal: string | undefined;
}

const open = new Set<string>(OPEN_CALL_STATUSES);

export function hasEnded(call: CallView): boolean {
  return !open.has(call.status);
}

/** Call `i` goes to workspace `i mod n`: 5 per workspace keeps every call live at once. */
export async function placeCalls(
  apiUrl: string,
  workspaces: readonly BenchWorkspace[],
  count: number,
): Promise<Placement> {
  const refused: Record<string, number> = {};
  let firstRefusal: string | undefined;
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i): Promise<PlacedCall | undefined> => {
      const workspace = workspaces[i % workspaces.length] as BenchWorkspace;
      const response = await request(`${apiUrl}/v2/calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${workspace.apiKey}`, 'content-type': 'application/json' },
        body: callBody(workspace.agentId),
      });
      const text = await response.body.text();
      if (response.statusCode !== 202) {
        refused[response.statusCode] = (refused[response.statusCode] ?? 0) + 1;
        firstRefusal ??= `${response.statusCode} ${text.slice(0, ERROR_TEXT_CHARS)}`;
        return undefined;
      }
      return { id: (JSON.parse(text) as { id: string }).id, workspace };
    }),
  );
  return { placed: results.filter((call) => call !== undefined), refused, firstRefusal };
}

async function listCalls(apiUrl: string, workspace: BenchWorkspace): Promise<CallView[]> {
  const response = await request(`${apiUrl}/v2/calls?limit=100`, {
    headers: { authorization: `Bearer ${workspace.apiKey}` },
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) {
    throw new Error(`GET /v2/calls answered ${response.statusCode}: ${text.slice(0, ERROR_TEXT_CHARS)}`);
  }
  return (JSON.parse(text) as { data: CallView[] }).data;
}

export interface WatchOptions {
  deadlineMs: number;
  /**
   * Called after every poll with the calls live (`in_progress`), ended, and still `queued` (held by the
   * dialer: their workspace's ceiling or the gateways' room) at that moment.
   */
  onPoll(live: number, ended: number, queued: number): void;
  /** A reason to give up at once, such as a platform process that exited. */
  failure(): Error | undefined;
}

export interface Watched {
  /** The latest view of every placed call. */
  calls: CallView[];
  allEnded: boolean;
}

export async function watchCalls(
  apiUrl: string,
  placed: readonly PlacedCall[],
  options: WatchOptions,
): Promise<Watched> {
  const latest = new Map<string, CallView>();
  const mine = new Set(placed.map((call) => call.id));
  const workspaces = [...new Set(placed.map((call) => call.workspace))];
  const deadline = performance.now() + options.deadlineMs;
  const isDone = (call: PlacedCall): boolean => {
    const view = latest.get(call.id);
    return view !== undefined && hasEnded(view);
  };
  const ended = (): boolean => placed.every(isDone);
  while (!ended() && performance.now() < deadline) {
    const failure = options.failure();
    if (failure) throw failure;
    const unfinished = workspaces.filter((workspace) =>
      placed.some((call) => call.workspace === workspace && !isDone(call)),
    );
    const lists = await Promise.all(unfinished.map((workspace) => listCalls(apiUrl, workspace)));
    for (const call of lists.flat()) if (mine.has(call.id)) latest.set(call.id, call);
    const views = [...latest.values()];
    options.onPoll(
      views.filter((call) => call.status === 'in_progress').length,
      views.filter(hasEnded).length,
      placed.length - views.filter((call) => call.status !== 'queued').length,
    );
    if (!ended()) await sleep(POLL_MS);
  }
  return {
    calls: placed.map((call) => latest.get(call.id)).filter((c) => c !== undefined),
    allEnded: ended(),
  };
}
