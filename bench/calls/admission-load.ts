import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { QUEUE_DEPTH_LIMIT } from '../../core/calls/admission.ts';
import { ownCpuMs } from '../support/proc-stat.ts';
import { callBody } from './workspaces.ts';

/**
 * The closed-loop load of `POST /v2/calls`: `concurrency` keep-alive connections, each with one request in
 * flight, spread over many workspaces' keys. Nothing dials in this setup (API role only), so every admitted
 * call stays queued and each workspace takes at most 500 (its queue depth): a workspace is set aside once
 * that many of its admissions are accepted or in flight, so the queue limit never refuses one. Only 202s
 * count as admissions; anything else is counted by status.
 */

const REQUEST_TIMEOUT_MS = 30_000;
const ERROR_TEXT_CHARS = 300;

export interface AdmissionKey {
  apiKey: string;
  agentId: string;
}

export interface AdmissionLoadSpec {
  origin: string;
  keys: readonly AdmissionKey[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Called as the measured window opens and closes, to sample the server's CPU over the same window. */
  onWindowOpen(): void;
  onWindowClose(): void;
}

export interface AdmissionLoadResult {
  accepted: number;
  /** Non-202 answers and failed requests in the window, by status (or `error:<code>`). */
  refused: Record<string, number>;
  firstRefusal: string | undefined;
  windowMs: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** This process's CPU over the window, percent of one core. */
  loadgenCpuPct: number;
  /** Every workspace's queue was full before the window closed: the figure is cut short. */
  ranOutOfWorkspaces: boolean;
}

/** Round-robin over the workspaces whose queues still have room, counting admissions in flight as taken. */
class QueueRoom {
  private readonly taken: number[];
  private next = 0;

  constructor(private readonly size: number) {
    this.taken = new Array<number>(size).fill(0);
  }

  take(): number | undefined {
    for (let tried = 0; tried < this.size; tried++) {
      const index = this.next;
      this.next = (this.next + 1) % this.size;
      if ((this.taken[index] ?? QUEUE_DEPTH_LIMIT) < QUEUE_DEPTH_LIMIT) {
        this.taken[index] = (this.taken[index] ?? 0) + 1;
        return index;
      }
    }
    return undefined;
  }

  giveBack(index: number): void {
    this.taken[index] = (this.taken[index] ?? 1) - 1;
  }
}

type Phase = 'warmup' | 'measure' | 'done';

export async function runAdmissionLoad(spec: AdmissionLoadSpec): Promise<AdmissionLoadResult> {
  const pool = new Pool(spec.origin, {
    connections: spec.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const requests = spec.keys.map((key) => ({
    headers: { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json' },
    body: Buffer.from(callBody(key.agentId)),
  }));
  const room = new QueueRoom(requests.length);
  const latencyNs = createHistogram({ lowest: 1, highest: 120e9, figures: 3 });
  const refused: Record<string, number> = {};
  let firstRefusal: string | undefined;
  let accepted = 0;
  let ranOutOfWorkspaces = false;
  let phase: Phase = 'warmup';

  const refuse = (key: string, text: string): void => {
    firstRefusal ??= text;
    if (phase === 'measure') refused[key] = (refused[key] ?? 0) + 1;
  };

  const connection = async (): Promise<void> => {
    while (phase !== 'done') {
      const index = room.take();
      if (index === undefined) {
        ranOutOfWorkspaces = true;
        return;
      }
      const { headers, body } = requests[index] as (typeof requests)[number];
      const started = process.hrtime.bigint();
      try {
        const response = await pool.request({ path: '/v2/calls', method: 'POST', headers, body });
        if (response.statusCode === 202) {
          await response.body.dump();
          if (phase === 'measure') {
            accepted++;
            latencyNs.record(Number(process.hrtime.bigint() - started) || 1);
          }
        } else {
          room.giveBack(index);
          const text = await response.body.text();
          refuse(String(response.statusCode), `${response.statusCode} ${text.slice(0, ERROR_TEXT_CHARS)}`);
        }
      } catch (error) {
        room.giveBack(index);
        const code = (error as { code?: string }).code ?? 'unknown';
        refuse(`error:${code}`, `error ${code}: ${String(error).slice(0, ERROR_TEXT_CHARS)}`);
        // A refused or reset connection fails at once; do not spin on it.
        await sleep(10);
      }
    }
  };

  const connections = Array.from({ length: spec.concurrency }, connection);
  try {
    await sleep(spec.warmupMs);
    phase = 'measure';
    const cpuStart = ownCpuMs();
    const wallStart = performance.now();
    spec.onWindowOpen();
    await sleep(spec.durationMs);
    phase = 'done';
    const windowMs = performance.now() - wallStart;
    const cpuMs = ownCpuMs() - cpuStart;
    spec.onWindowClose();
    await Promise.race([Promise.all(connections), sleep(REQUEST_TIMEOUT_MS + 1_000)]);
    return {
      accepted,
      refused,
      firstRefusal,
      windowMs,
      perSecond: (accepted * 1000) / windowMs,
      p50Ms: accepted > 0 ? latencyNs.percentile(50) / 1e6 : Number.NaN,
      p99Ms: accepted > 0 ? latencyNs.percentile(99) / 1e6 : Number.NaN,
      loadgenCpuPct: (100 * cpuMs) / windowMs,
      ranOutOfWorkspaces,
    };
  } finally {
    phase = 'done';
    await pool.destroy().catch(() => {});
  }
}
