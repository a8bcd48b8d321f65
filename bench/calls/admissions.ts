import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QUEUE_DEPTH_LIMIT } from '../../core/calls/admission.ts';
import type { Cleanups } from '../support/cleanups.ts';
import {
  cpuBetween,
  machineBusyPct,
  machineTicks,
  type ProcessCpu,
  processCpu,
} from '../support/proc-stat.ts';
import { runAdmissionLoad } from './admission-load.ts';
import type { BenchOptions } from './options.ts';
import { platformEnv } from './platform-env.ts';
import { freePort, PlatformProcess } from './platform-process.ts';
import { createAgents, provisionWorkspaces } from './workspaces.ts';

/**
 * One admissions run: a fresh platform (`serve --roles api`, SQLite in a new DATA_DIR) with its own
 * workspaces, driven by `runAdmissionLoad` from this process; the server's CPU is read from /proc over the
 * same measured window.
 */

/** What one core could conceivably admit; sizes the workspaces so their queues outlast warm-up and window. */
const ADMISSIONS_CEILING_PER_S = 5_000;

export interface AdmissionRun {
  perSecond: number;
  accepted: number;
  refused: Record<string, number>;
  firstRefusal: string | undefined;
  p50Ms: number;
  p99Ms: number;
  serverCpuPct: number;
  loadgenCpuPct: number;
  machineCpuPct: number;
  workspaces: number;
  ranOutOfWorkspaces: boolean;
}

export function admissionWorkspaces(options: BenchOptions): number {
  if (options.workspaces !== undefined) return options.workspaces;
  const seconds = options.warmupS + options.durationS;
  return Math.ceil((seconds * ADMISSIONS_CEILING_PER_S) / QUEUE_DEPTH_LIMIT);
}

export async function runAdmissions(
  options: BenchOptions,
  cleanups: Cleanups,
  log: (line: string) => void,
): Promise<AdmissionRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-bench-calls-admissions-'));
  const removeDataDir = cleanups.defer(`remove ${dataDir}`, () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
  try {
    const count = admissionWorkspaces(options);
    const provisioned = await provisionWorkspaces({ DATA_DIR: dataDir }, count);
    const server = PlatformProcess.launch({
      name: 'api',
      roles: ['api'],
      root: options.root,
      env: platformEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) }),
      startTimeoutMs: options.startTimeoutS * 1000,
      log,
    });
    const stopServer = cleanups.defer('stop the api process', () => server.stop());
    try {
      await server.serving();
      const apiUrl = server.apiUrl as string;
      const workspaces = await createAgents(apiUrl, provisioned);
      let cpuStart: ProcessCpu = { ownMs: 0, childrenMs: 0 };
      let cpuEnd: ProcessCpu = cpuStart;
      let machineStart = machineTicks();
      let machineEnd = machineStart;
      let windowStart = 0;
      let windowMs = 0;
      const load = await runAdmissionLoad({
        origin: apiUrl,
        keys: workspaces,
        concurrency: options.concurrency,
        warmupMs: options.warmupS * 1000,
        durationMs: options.durationS * 1000,
        onWindowOpen: () => {
          cpuStart = processCpu(server.pid);
          machineStart = machineTicks();
          windowStart = performance.now();
        },
        onWindowClose: () => {
          cpuEnd = processCpu(server.pid);
          machineEnd = machineTicks();
          windowMs = performance.now() - windowStart;
        },
      });
      const exit = server.unexpectedExit();
      if (exit) throw exit;
      return {
        perSecond: load.perSecond,
        accepted: load.accepted,
        refused: load.refused,
        firstRefusal: load.firstRefusal,
        p50Ms: load.p50Ms,
        p99Ms: load.p99Ms,
        serverCpuPct: (100 * cpuBetween(cpuStart, cpuEnd).ownMs) / windowMs,
        loadgenCpuPct: load.loadgenCpuPct,
        machineCpuPct: machineBusyPct(machineStart, machineEnd),
        workspaces: workspaces.length,
        ranOutOfWorkspaces: load.ranOutOfWorkspaces,
      };
    } finally {
      await stopServer();
    }
  } finally {
    await removeDataDir();
  }
}
