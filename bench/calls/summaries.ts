import { CALL_PARTS, type CallPart } from '../cpu-parts.ts';
import type { CallFloors } from '../pipeline-floors.ts';
import type { AdmissionRun } from './admissions.ts';
import type { ConversationMode } from './conversation-platform.ts';
import type { ConversationRun } from './conversations.ts';
import { addCounts, median } from './stats.ts';

/** The figures quoted for a part: medians over its runs, with the per-run values kept for the report. */

export interface AdmissionSummary {
  runs: AdmissionRun[];
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuPct: number;
  /** Server CPU per admission (µs); unlike admissions/s it hardly moves when other work takes the cores. */
  serverUsPerAdmission: number;
  loadgenCpuPct: number;
  machineCpuPct: number;
  /** Refusals over all runs, by status. */
  refused: Record<string, number>;
  firstRefusal: string | undefined;
  ranOutOfWorkspaces: boolean;
}

export function summariseAdmissions(runs: AdmissionRun[]): AdmissionSummary {
  const refused: Record<string, number> = {};
  for (const run of runs) addCounts(refused, run.refused);
  const of = (pick: (run: AdmissionRun) => number): number => median(runs.map(pick));
  return {
    runs,
    perSecond: of((r) => r.perSecond),
    p50Ms: of((r) => r.p50Ms),
    p99Ms: of((r) => r.p99Ms),
    serverCpuPct: of((r) => r.serverCpuPct),
    serverUsPerAdmission: of((r) => (r.serverCpuPct * 10_000) / r.perSecond),
    loadgenCpuPct: of((r) => r.loadgenCpuPct),
    machineCpuPct: of((r) => r.machineCpuPct),
    refused,
    firstRefusal: runs.find((r) => r.firstRefusal !== undefined)?.firstRefusal,
    ranOutOfWorkspaces: runs.some((r) => r.ranOutOfWorkspaces),
  };
}

export interface ConversationSummary {
  runs: ConversationRun[];
  mode: ConversationMode;
  placed: number;
  completed: number;
  withLatency: number;
  byStatus: Record<string, number>;
  refused: Record<string, number>;
  firstRefusal: string | undefined;
  unfinishedRuns: number;
  voiceToVoiceP50Ms: number;
  voiceToVoiceP95Ms: number;
  overheadP50Ms: number;
  overheadP95Ms: number;
  stagesP50Ms: Record<string, number>;
  livePeak: number;
  maxCalls: number;
  heldPeak: number;
  refusedAtCapacity: number;
  /** Whether no run had more calls live at once than the gateway's limit. */
  limitHeld: boolean;
  /** The measured process while all calls were live, percent of one core, and that per live call (ms/s). */
  allLiveCpuPct: number;
  allLiveCpuMsPerCallSecond: number;
  liveSeconds: number;
  windowS: number;
  /** Measured process: its own CPU per second of live call, and that of the child processes it ran. */
  cpuMsPerCallSecond: number;
  childCpuMsPerCallSecond: number;
  measuredCpuPct: number;
  loadgenCpuPct: number;
  loadgenCpuMsPerCallSecond: number;
  /** The fake engines' process, percent of a core; NaN when the calls ran on the configured engines. */
  enginesCpuPct: number;
  benchCpuPct: number;
  rssGrowthMbPerCall: number;
  machineCpuPct: number;
  /** 1000 / cpuMsPerCallSecond. */
  callsPerCore: number;
  /** cpuMsPerCallSecond split by part (each part's share of the profiled window); empty without profiles. */
  partsMsPerCallSecond: Partial<Record<CallPart, number>>;
  /** Measured in the benchmark's process after the runs (bench/pipeline-floors.ts). */
  floors?: CallFloors;
}

function partsPerCallSecond(runs: ConversationRun[]): Partial<Record<CallPart, number>> {
  const profiled = runs.filter((r) => r.cpuParts && r.cpuParts.busyMs > 0 && r.liveSeconds > 0);
  if (profiled.length === 0) return {};
  return Object.fromEntries(
    CALL_PARTS.map((part) => [
      part,
      median(
        profiled.map((r) => {
          const parts = r.cpuParts!;
          return ((parts.ms[part] / parts.busyMs) * r.measured.cpu.ownMs) / r.liveSeconds;
        }),
      ),
    ]),
  );
}

export function summariseConversations(runs: ConversationRun[]): ConversationSummary {
  const byStatus: Record<string, number> = {};
  const refused: Record<string, number> = {};
  for (const run of runs) {
    addCounts(byStatus, run.byStatus);
    addCounts(refused, run.refused);
  }
  const of = (pick: (run: ConversationRun) => number): number => median(runs.map(pick));
  const perCallSecond = (ms: number, run: ConversationRun): number =>
    run.liveSeconds > 0 ? ms / run.liveSeconds : Number.NaN;
  const stageNames = Object.keys(runs[0]?.stagesP50Ms ?? {}) as Array<keyof ConversationRun['stagesP50Ms']>;
  return {
    runs,
    mode: runs[0]?.mode ?? 'single',
    placed: of((r) => r.placed),
    completed: of((r) => r.completed),
    withLatency: of((r) => r.withLatency),
    byStatus,
    refused,
    firstRefusal: runs.find((r) => r.firstRefusal !== undefined)?.firstRefusal,
    unfinishedRuns: runs.filter((r) => !r.allEnded).length,
    voiceToVoiceP50Ms: of((r) => r.voiceToVoiceP50Ms),
    voiceToVoiceP95Ms: of((r) => r.voiceToVoiceP95Ms),
    overheadP50Ms: of((r) => r.overheadP50Ms),
    overheadP95Ms: of((r) => r.overheadP95Ms),
    stagesP50Ms: Object.fromEntries(stageNames.map((stage) => [stage, of((r) => r.stagesP50Ms[stage])])),
    livePeak: of((r) => r.livePeak),
    maxCalls: of((r) => r.maxCalls),
    heldPeak: of((r) => r.heldPeak),
    refusedAtCapacity: of((r) => r.refusedAtCapacity),
    limitHeld: runs.every((r) => r.livePeak <= r.maxCalls),
    allLiveCpuPct: of((r) => r.allLiveCpuPct),
    allLiveCpuMsPerCallSecond: of((r) => (r.fullLive > 0 ? (r.allLiveCpuPct * 10) / r.fullLive : Number.NaN)),
    liveSeconds: of((r) => r.liveSeconds),
    windowS: of((r) => r.windowS),
    cpuMsPerCallSecond: of((r) => perCallSecond(r.measured.cpu.ownMs, r)),
    childCpuMsPerCallSecond: of((r) => perCallSecond(r.measured.cpu.childrenMs, r)),
    measuredCpuPct: of((r) => r.measured.cpuPct),
    loadgenCpuPct: of((r) => r.loadgen?.cpuPct ?? Number.NaN),
    loadgenCpuMsPerCallSecond: of((r) => (r.loadgen ? perCallSecond(r.loadgen.cpu.ownMs, r) : Number.NaN)),
    enginesCpuPct: of((r) => r.engines?.cpuPct ?? Number.NaN),
    benchCpuPct: of((r) => r.benchCpuPct),
    rssGrowthMbPerCall: of((r) => r.rssGrowthMbPerCall),
    machineCpuPct: of((r) => r.machineCpuPct),
    callsPerCore: 1000 / of((r) => perCallSecond(r.measured.cpu.ownMs, r)),
    partsMsPerCallSecond: partsPerCallSecond(runs),
  };
}
