import { CALL_PARTS, type CallPart } from '../cpu-parts.ts';
import type { CallFloors } from '../pipeline-floors.ts';
import type { BenchOptions } from './options.ts';
import { fixed, median, rounded } from './stats.ts';
import type { AdmissionSummary, ConversationSummary } from './summaries.ts';

/** The human-readable report (stdout) and the closing JSON line of `--json`. */

const perRun = (values: number[], digits: number): string => values.map((v) => fixed(v, digits)).join(' / ');

export function admissionsText(s: AdmissionSummary, options: BenchOptions): string {
  const lines = [
    `POST /v2/calls admissions (SQLite, one api process; ${options.concurrency} in flight, ` +
      `${options.warmupS} s warm-up, ${options.durationS} s measured, ${s.runs.length} run(s), ` +
      `${s.runs[0]?.workspaces ?? '-'} workspaces)`,
    `  admissions/s        ${fixed(s.perSecond, 0)} (median; runs ${perRun(
      s.runs.map((r) => r.perSecond),
      0,
    )})`,
    `  latency             p50 ${fixed(s.p50Ms, 2)} ms, p99 ${fixed(s.p99Ms, 2)} ms`,
    `  server CPU          ${fixed(s.serverCpuPct, 0)}% of a core, ${fixed(s.serverUsPerAdmission, 0)} µs per admission`,
    `  load generator CPU  ${fixed(s.loadgenCpuPct, 0)}% of a core (this process)`,
    `  machine             ${fixed(s.machineCpuPct, 0)}% of all cores busy`,
  ];
  const refusals = Object.entries(s.refused);
  lines.push(
    refusals.length === 0
      ? '  non-202 answers     none'
      : `  non-202 answers     ${refusals.map(([k, n]) => `${k}: ${n}`).join(', ')}; first: ${s.firstRefusal ?? '-'}`,
  );
  if (s.ranOutOfWorkspaces) {
    lines.push('  every workspace queue filled before the window closed: raise --workspaces');
  }
  return lines.join('\n');
}

export function conversationsText(s: ConversationSummary, options: BenchOptions): string {
  const measured = s.runs[0]?.measured.name ?? '-';
  const setup =
    s.mode === 'split'
      ? `PostgreSQL + Redis; measured process "${measured}", load generator "worker" (dialer and simulated callees)`
      : `SQLite, one process "${measured}": the simulated callees' CPU is included in its figures`;
  const statuses = Object.entries(s.byStatus)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  const stages = Object.entries(s.stagesP50Ms)
    .map(([stage, ms]) => `${stage.replace(/_ms$/, '')} ${fixed(ms, 0)}`)
    .join(', ');
  const engines =
    options.engines === 'fake'
      ? 'engines: fixed-latency fake Deepgram STT, OpenAI chat and speech in a process of their own'
      : 'engines: as configured by LLM_*, STT_*, TTS_* (default: local PocketSphinx, scripted, eSpeak NG)';
  const lines = [
    `Conversational sandbox calls (${options.calls} placed at once, ${s.runs.length} run(s); ${setup}; ${engines})`,
    `  completed           ${fixed(s.completed, 0)} of ${fixed(s.placed, 0)} (median); all runs: ${statuses || '-'}`,
    `  live at once        ${fixed(s.livePeak, 0)} peak; ${fixed(s.liveSeconds, 0)} call-seconds in ${fixed(s.windowS, 0)} s`,
    `  admission limit     ${fixed(s.maxCalls, 0)} calls on the gateway (${s.limitHeld ? 'held' : 'EXCEEDED'}); ` +
      `admitted at once ${fixed(Math.min(s.livePeak, s.placed), 0)}, held queued at most ${fixed(s.heldPeak, 0)}, ` +
      `refused at the gateway ${fixed(s.refusedAtCapacity, 0)}`,
    `  voice to voice      p50 ${fixed(s.voiceToVoiceP50Ms, 0)} ms, p95 ${fixed(s.voiceToVoiceP95Ms, 0)} ms, ` +
      `p95 - p50 ${fixed(s.voiceToVoiceP95Ms - s.voiceToVoiceP50Ms, 0)} ms ` +
      `(median of the calls' p50; 95th percentile of their p95; ${fixed(s.withLatency, 0)} calls measured turns)`,
    `  pipeline overhead   p50 ${fixed(s.overheadP50Ms, 1)} ms, p95 ${fixed(s.overheadP95Ms, 1)} ms`,
    `  stages (p50, ms)    ${stages || '-'}`,
    `  measured CPU        ${fixed(s.cpuMsPerCallSecond, 1)} ms per call-second over the window ` +
      `(${fixed(s.measuredCpuPct, 0)}% of a core; runs ${perRun(
        s.runs.map((r) => (r.liveSeconds > 0 ? r.measured.cpu.ownMs / r.liveSeconds : Number.NaN)),
        1,
      )})`,
    `  while all were live ${fixed(s.allLiveCpuPct, 0)}% of a core, ` +
      `${fixed(s.allLiveCpuMsPerCallSecond, 1)} ms per call-second (≈ ${fixed(
        1000 / s.allLiveCpuMsPerCallSecond,
        0,
      )} calls per core; median over ${fixed(median(s.runs.map((r) => r.allLiveSeconds)), 0)} s of polls)`,
    `  calls per core      ${fixed(s.callsPerCore, 0)} (1000 / the measured CPU per call-second)`,
    ...partsLine(s),
    `  its child processes ${fixed(s.childCpuMsPerCallSecond, 1)} ms per call-second (local STT decoders, not above)`,
    `  memory              ${fixed(s.rssGrowthMbPerCall, 2)} MB RSS growth per call (peak over idle)`,
    s.mode === 'split'
      ? `  load generator CPU  ${fixed(s.loadgenCpuPct, 0)}% of a core, ${fixed(s.loadgenCpuMsPerCallSecond, 1)} ms per call-second (worker)`
      : '  load generator CPU  inside the measured process (no DATABASE_URL and REDIS_URL: one process)',
    ...(options.engines === 'fake' ? [`  fake engines CPU    ${fixed(s.enginesCpuPct, 0)}% of a core`] : []),
    `  this process        ${fixed(s.benchCpuPct, 1)}% of a core (placing and following the calls)`,
    `  machine             ${fixed(s.machineCpuPct, 0)}% of all cores busy`,
  ];
  const refusals = Object.entries(s.refused);
  if (refusals.length > 0) {
    lines.push(
      `  refused placements  ${refusals.map(([k, n]) => `${k}: ${n}`).join(', ')}; first: ${s.firstRefusal ?? '-'}`,
    );
  }
  if (s.unfinishedRuns > 0) {
    lines.push(`  ${s.unfinishedRuns} run(s) had calls still open at the ${options.deadlineS} s deadline`);
  }
  return lines.join('\n');
}

const PART_LABELS: Record<CallPart, string> = {
  gateway_transport: 'gateway transport',
  vad: 'VAD',
  stt_feed: 'STT feed',
  tts: 'TTS',
  resampling: 'resampling',
  playout: 'playout',
  recording: 'recording',
  http_clients: 'HTTP clients to the engines',
  simulated_callers: 'simulated callers',
  gc: 'GC',
  rest: 'the rest',
};

function partsLine(s: ConversationSummary): string[] {
  const parts = s.partsMsPerCallSecond;
  if (Object.keys(parts).length === 0) return [];
  const total = CALL_PARTS.reduce((sum, p) => sum + (parts[p] ?? 0), 0);
  const each = CALL_PARTS.map(
    (p) =>
      `${PART_LABELS[p]} ${fixed(parts[p] ?? Number.NaN, 2)} (${fixed((100 * (parts[p] ?? 0)) / total, 0)}%)`,
  );
  const lines = [`  by part, ms per call-second (from a CPU profile of the window): ${each.join(', ')}`];
  const floors = s.floors;
  if (floors) {
    lines.push(
      `  floors, same run    Silero inference alone ${fixed(floors.sileroUsPerWindow, 0)} µs per window at ` +
        `${floors.sileroBatch} batched = ${fixed(sileroFloorMs(floors), 2)} ms per call-second were every window ` +
        `run (VAD part ${fixed(parts.vad ?? Number.NaN, 2)}; its silence gate skips some); resampling alone ` +
        `${fixed(floors.telephonyResampleUsPerFramePair, 1)} µs per 8k<->16k frame pair = ` +
        `${fixed(telephonyFloorMs(floors), 2)} ms per call-second, plus ${fixed(floors.ttsResampleUsPerFrame, 1)} µs ` +
        `per 20 ms of agent speech at 24k->16k (resampling part ${fixed(parts.resampling ?? Number.NaN, 2)})`,
    );
  }
  return lines;
}

/** Silero windows are 32 ms: 31.25 a second. */
const sileroFloorMs = (f: CallFloors) => (f.sileroUsPerWindow * 31.25) / 1000;
/** 50 frame pairs a second. */
const telephonyFloorMs = (f: CallFloors) => (f.telephonyResampleUsPerFramePair * 50) / 1000;

export interface MachineLoad {
  cpus: number;
  loadAvgStart: string;
  loadAvgEnd: string;
}

export function jsonLine(
  admissions: AdmissionSummary | undefined,
  conversations: ConversationSummary | undefined,
  options: BenchOptions,
  machine: MachineLoad,
): string {
  const a = admissions;
  const c = conversations;
  const n = (value: number | undefined, digits: number): number | null =>
    value === undefined ? null : rounded(value, digits);
  return JSON.stringify({
    admissions_per_s: n(a?.perSecond, 0),
    calls: c ? options.calls : null,
    voice_to_voice_p50_ms: n(c?.voiceToVoiceP50Ms, 0),
    voice_to_voice_p95_ms: n(c?.voiceToVoiceP95Ms, 0),
    overhead_p95_ms: n(c?.overheadP95Ms, 1),
    cpu_ms_per_call_second: n(c?.cpuMsPerCallSecond, 1),
    calls_per_core: n(c?.callsPerCore, 0),
    silero_floor_ms_per_call_second: c?.floors ? rounded(sileroFloorMs(c.floors), 2) : null,
    telephony_resampling_floor_ms_per_call_second: c?.floors ? rounded(telephonyFloorMs(c.floors), 2) : null,
    tts_resampling_floor_us_per_frame: c?.floors ? rounded(c.floors.ttsResampleUsPerFrame, 1) : null,
    parts_ms_per_call_second: c
      ? Object.fromEntries(Object.entries(c.partsMsPerCallSecond).map(([k, v]) => [k, rounded(v, 2)]))
      : null,
    admissions_p50_ms: n(a?.p50Ms, 2),
    admissions_p99_ms: n(a?.p99Ms, 2),
    admissions_non_202: a ? a.refused : null,
    admissions_server_cpu_pct: n(a?.serverCpuPct, 1),
    admissions_server_us_per_admission: n(a?.serverUsPerAdmission, 0),
    admissions_loadgen_cpu_pct: n(a?.loadgenCpuPct, 1),
    admissions_per_s_runs: a ? a.runs.map((r) => rounded(r.perSecond, 0)) : null,
    calls_completed: n(c?.completed, 0),
    calls_by_status: c ? c.byStatus : null,
    calls_live_peak: n(c?.livePeak, 0),
    gateway_max_calls: n(c?.maxCalls, 0),
    admission_limit_held: c ? c.limitHeld : null,
    calls_held_peak: n(c?.heldPeak, 0),
    calls_refused_at_capacity: n(c?.refusedAtCapacity, 0),
    voice_to_voice_p95_minus_p50_ms: c ? rounded(c.voiceToVoiceP95Ms - c.voiceToVoiceP50Ms, 0) : null,
    all_live_cpu_pct: n(c?.allLiveCpuPct, 1),
    all_live_cpu_ms_per_call_second: n(c?.allLiveCpuMsPerCallSecond, 1),
    overhead_p50_ms: n(c?.overheadP50Ms, 1),
    conversation_mode: c ? c.mode : null,
    callee_cpu_included: c ? c.mode === 'single' : null,
    child_process_cpu_ms_per_call_second: n(c?.childCpuMsPerCallSecond, 1),
    loadgen_cpu_pct: n(c?.loadgenCpuPct, 1),
    loadgen_cpu_ms_per_call_second: n(c?.loadgenCpuMsPerCallSecond, 1),
    engines: c ? options.engines : null,
    engines_cpu_pct: n(c?.enginesCpuPct, 1),
    rss_mb_per_call: n(c?.rssGrowthMbPerCall, 2),
    runs: options.runs,
    cpus: machine.cpus,
    load_avg_start: machine.loadAvgStart,
    load_avg_end: machine.loadAvgEnd,
  });
}
