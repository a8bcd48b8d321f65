import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultMaxCalls } from '../../core/calls/capacity.ts';
import { type CallParts, callPartsOfProfile } from '../cpu-parts.ts';
import type { Cleanups } from '../support/cleanups.ts';
import {
  cpuBetween,
  machineBusyPct,
  machineTicks,
  ownCpuMs,
  type ProcessCpu,
  processCpu,
  processRssBytes,
} from '../support/proc-stat.ts';
import { describeIncomplete } from './call-diagnostics.ts';
import { placeCalls, watchCalls } from './call-watch.ts';
import { type ConversationFigures, conversationFigures } from './conversation-figures.ts';
import { type ConversationMode, startConversationPlatform } from './conversation-platform.ts';
import { CpuWhileAllLive } from './cpu-while-live.ts';
import type { BenchOptions } from './options.ts';

/** The calls ended by a gateway node at its limit (core: `AT_CAPACITY_ENDED_REASON`). */
const AT_CAPACITY = 'gateway-at-capacity';

/**
 * One conversations run: `calls` conversational sandbox calls placed at once on a fresh platform
 * (`conversation-platform.ts`) and followed to their end; CPU of every process involved over that window, read
 * from /proc, and the calls' own latency summaries.
 */

const PROGRESS_EVERY_MS = 15_000;

export interface ProcessUse {
  name: string;
  /** CPU of the process itself over the window (ms), and of child processes it reaped meanwhile. */
  cpu: ProcessCpu;
  cpuPct: number;
}

export interface ConversationRun extends ConversationFigures {
  mode: ConversationMode;
  placed: number;
  refused: Record<string, number>;
  firstRefusal: string | undefined;
  allEnded: boolean;
  /** From placing the calls to the last one ended (or the deadline). */
  windowS: number;
  measured: ProcessUse;
  /** The worker process (dialer and callees); undefined when it is the measured process too. */
  loadgen: ProcessUse | undefined;
  /** The fake engines' process, when the calls ran on them. */
  engines: ProcessUse | undefined;
  /** This process (placing and following the calls) over the window, percent of one core. */
  benchCpuPct: number;
  livePeak: number;
  /** The gateway's admission limit in this run (`--max-calls`, or the node's default on this machine). */
  maxCalls: number;
  /** The most calls seen waiting in `queued` at once after the first poll (held for want of room). */
  heldPeak: number;
  /** Calls a gateway refused at its limit (ended `gateway-at-capacity`). */
  refusedAtCapacity: number;
  /** Calls live at once when the node is as full as this run makes it: min(placed, maxCalls). */
  fullLive: number;
  /** The measured process while every call was live: percent of one core, over how many seconds. */
  allLiveCpuPct: number;
  allLiveSeconds: number;
  /** Peak resident memory of the measured process over its idle size before the calls, per call placed. */
  rssGrowthMbPerCall: number;
  machineCpuPct: number;
  /** The measured process's CPU over the window split by part, from its CPU profile; undefined without one. */
  cpuParts: CallParts | undefined;
}

/** CPU of one process over the window, from a reading taken as the window opened. */
class ProcessMeter {
  private readonly start: ProcessCpu;

  constructor(
    private readonly name: string,
    private readonly pid: number,
  ) {
    this.start = processCpu(pid);
  }

  use(windowMs: number): ProcessUse {
    const cpu = cpuBetween(this.start, processCpu(this.pid));
    return { name: this.name, cpu, cpuPct: (100 * cpu.ownMs) / windowMs };
  }
}

export async function runConversations(
  options: BenchOptions,
  cleanups: Cleanups,
  log: (line: string) => void,
): Promise<ConversationRun> {
  const profileDir = options.cpuParts ? mkdtempSync(path.join(os.tmpdir(), 'bench-calls-parts-')) : undefined;
  const removeProfiles = cleanups.defer('remove the CPU profiles', () => {
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });
  const platform = await startConversationPlatform(options, cleanups, log, profileDir);
  const { apiUrl, measured, worker, engines } = platform;
  const usNow = () => Number(process.hrtime.bigint() / 1000n);
  let run: ConversationRun | undefined;
  let profileWindow = { fromUs: 0, toUs: 0 };
  try {
    const idleRss = processRssBytes(measured.pid);
    let peakRss = idleRss;
    let livePeak = 0;
    let heldPeak = 0;
    let polls = 0;
    const maxCalls = options.maxCalls ?? defaultMaxCalls(os.availableParallelism());
    const measuredMeter = new ProcessMeter(measured.name, measured.pid);
    const workerMeter = worker ? new ProcessMeter(worker.name, worker.pid) : undefined;
    const enginesMeter = engines ? new ProcessMeter('fake engines', engines.pid) : undefined;
    const benchStart = ownCpuMs();
    const machineStart = machineTicks();
    const windowStart = performance.now();
    profileWindow.fromUs = usNow();
    const whileAllLive = new CpuWhileAllLive(measured.pid);

    const placement = await placeCalls(apiUrl, platform.workspaces, options.calls);
    const fullLive = Math.min(placement.placed.length, maxCalls);
    log(`conversations: ${placement.placed.length} of ${options.calls} calls placed; following them`);
    let lastLine = { atMs: windowStart, cpu: processCpu(measured.pid) };
    const watched = await watchCalls(apiUrl, placement.placed, {
      deadlineMs: options.deadlineS * 1000,
      onPoll: (live, ended, queued) => {
        livePeak = Math.max(livePeak, live);
        // The first poll may come before the dialer's first pass.
        if (++polls > 1) heldPeak = Math.max(heldPeak, queued);
        whileAllLive.poll(live, fullLive);
        peakRss = Math.max(peakRss, processRssBytes(measured.pid));
        const now = performance.now();
        if (options.timeline || now - lastLine.atMs >= PROGRESS_EVERY_MS) {
          const cpu = processCpu(measured.pid);
          const cpuPct = (100 * (cpu.ownMs - lastLine.cpu.ownMs)) / (now - lastLine.atMs);
          log(
            `conversations: ${Math.round((now - windowStart) / 1000)} s: ${live} live, ${queued} queued, ${ended} ended; ` +
              `${measured.name} CPU ${cpuPct.toFixed(0)}% of a core since the last line`,
          );
          lastLine = { atMs: now, cpu };
        }
      },
      failure: () => measured.unexpectedExit() ?? worker?.unexpectedExit(),
    });

    const windowMs = performance.now() - windowStart;
    profileWindow = { ...profileWindow, toUs: usNow() };
    run = {
      ...conversationFigures(watched.calls),
      mode: platform.mode,
      placed: placement.placed.length,
      refused: placement.refused,
      firstRefusal: placement.firstRefusal,
      allEnded: watched.allEnded,
      windowS: windowMs / 1000,
      measured: measuredMeter.use(windowMs),
      loadgen: workerMeter?.use(windowMs),
      engines: enginesMeter?.use(windowMs),
      benchCpuPct: (100 * (ownCpuMs() - benchStart)) / windowMs,
      livePeak,
      maxCalls,
      heldPeak,
      refusedAtCapacity: watched.calls.filter((call) => call.ended_reason === AT_CAPACITY).length,
      fullLive,
      allLiveCpuPct: whileAllLive.cpuPct(),
      allLiveSeconds: whileAllLive.seconds(),
      rssGrowthMbPerCall: (peakRss - idleRss) / 1_048_576 / Math.max(1, placement.placed.length),
      machineCpuPct: machineBusyPct(machineStart, machineTicks()),
      cpuParts: undefined,
    };
    await describeIncomplete(apiUrl, placement.placed, watched.calls, log);
  } finally {
    await platform.stop();
  }
  // The profile is written as the measured process exits.
  const file = profileDir && readdirSync(profileDir).find((name) => name.includes(`.${measured.pid}.`));
  if (profileDir && !file) log(`conversations: the ${measured.name} process left no CPU profile`);
  const cpuParts = file ? callPartsOfProfile(path.join(profileDir, file), profileWindow) : undefined;
  await removeProfiles();
  return { ...run, cpuParts };
}
