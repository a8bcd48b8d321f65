/**
 * The load generator for `bench/api.ts`, in its own process so that its CPU neither competes inside the
 * server's event loop nor hides in the parent's. Closed loop: `connections` keep-alive connections (undici
 * Pool, no pipelining), each with one request in flight; a warm-up, then a measured window in which only 2xx
 * responses count as done and anything else counts as an error. It reports requests/s, latency p50/p99 and its
 * own CPU over the window, and tells the parent when the window opens and closes so the parent can sample the
 * server's CPU over the same window.
 */
import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import {
  cpuPct,
  cpuSample,
  type LoadResult,
  type LoadSpec,
  sendToParent,
  type ToLoadgen,
} from './api-protocol.ts';

/** A request that has not answered within this long is an error (it also bounds the drain at the end). */
const REQUEST_TIMEOUT_MS = 30_000;
const ERROR_BODY_CHARS = 300;

type Phase = 'warmup' | 'measure' | 'drain';

async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const origin = new URL(spec.origin);
  if (origin.hostname !== '127.0.0.1' || origin.protocol !== 'http:') {
    throw new Error(`the load generator only sends to http://127.0.0.1, not ${spec.origin}`);
  }
  const pool = new Pool(origin.origin, {
    connections: spec.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  const latencyNs = createHistogram({ lowest: 1, highest: 120e9, figures: 3 });
  const statuses: Record<string, number> = {};
  let phase: Phase = 'warmup';
  let ok = 0;
  let errors = 0;
  let firstErrorBody: string | undefined;

  const count = (key: string): void => {
    statuses[key] = (statuses[key] ?? 0) + 1;
  };

  const worker = async (): Promise<void> => {
    while (phase !== 'drain') {
      const started = process.hrtime.bigint();
      try {
        const response = await pool.request({
          origin: origin.origin,
          path: spec.path,
          method: spec.method,
          headers: spec.headers,
          ...(body ? { body } : {}),
        });
        const success = response.statusCode >= 200 && response.statusCode < 300;
        if (success) await response.body.dump();
        else {
          const text = await response.body.text();
          firstErrorBody ??= `${response.statusCode} ${text.slice(0, ERROR_BODY_CHARS)}`;
        }
        if (phase !== 'measure') continue;
        count(String(response.statusCode));
        if (success) {
          ok++;
          latencyNs.record(Number(process.hrtime.bigint() - started) || 1);
        } else errors++;
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'unknown';
        firstErrorBody ??= `error ${code}: ${String(error).slice(0, ERROR_BODY_CHARS)}`;
        if (phase === 'measure') {
          errors++;
          count(`error:${code}`);
        }
        // A refused or reset connection fails at once; do not spin on it.
        await sleep(10);
      }
    }
  };

  const workers = Array.from({ length: spec.connections }, worker);
  try {
    await sleep(spec.warmupMs);
    phase = 'measure';
    const cpuStart = cpuSample();
    sendToParent({ type: 'measure-start' });
    await sleep(spec.durationMs);
    phase = 'drain';
    const cpuEnd = cpuSample();
    sendToParent({ type: 'measure-end' });

    const windowMs = cpuEnd.wallMs - cpuStart.wallMs;
    await Promise.race([Promise.all(workers), sleep(REQUEST_TIMEOUT_MS + 1_000)]);
    return {
      ok,
      errors,
      statuses,
      firstErrorBody,
      windowMs,
      rps: (ok * 1000) / windowMs,
      p50Ms: ok > 0 ? latencyNs.percentile(50) / 1e6 : Number.NaN,
      p99Ms: ok > 0 ? latencyNs.percentile(99) / 1e6 : Number.NaN,
      cpuPct: cpuPct(cpuStart, cpuEnd),
    };
  } finally {
    phase = 'drain';
    await pool.destroy().catch(() => {});
  }
}

let busy = false;

process.on('message', (message: ToLoadgen) => {
  if (message.type === 'stop') {
    process.exit(0);
  }
  if (busy) {
    sendToParent({ type: 'error', message: 'a run is already in progress' });
    return;
  }
  busy = true;
  runLoad(message.spec)
    .then((result) => sendToParent({ type: 'result', result }))
    .catch((error: unknown) =>
      sendToParent({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
    )
    .finally(() => {
      busy = false;
    });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));

if (!process.send) {
  process.stderr.write('bench/api-loadgen.ts is started by bench/api.ts (it needs an IPC channel)\n');
  process.exit(1);
}
sendToParent({ type: 'ready' });
