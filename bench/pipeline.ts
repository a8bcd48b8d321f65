/**
 * Pipeline overhead, CPU and memory per live call: 1, 50 and 200 concurrent CallSessions talking to engines of
 * fixed latency (docs/architecture.md, "Performance budgets").
 *
 *   npm run bench:pipeline -- [--sessions 1,50,200] [--turns 3] [--runs 1] [--json] [--spread 4000]
 *                             [--voicemail] [--cpu-prof] [--cpu-prof-dir DIR] [--turn-log FILE] [--no-parts]
 *                             [--speculative on|off|both]
 *
 * Three kinds of process:
 * - this one: makes the caller's lines once with eSpeak NG, starts the others, samples CPU, prints;
 * - the engines (`bench/pipeline-engines.ts`), real servers on 127.0.0.1: a fake Deepgram live STT that sends
 *   `speech_final` 150 ms of audio after the caller's speech stops (chosen over the batch transcription fake: the
 *   batch adapter only sends an utterance after its own 500 ms of VAD silence, so its "150 ms" could not be
 *   150 ms after the speech), a fake OpenAI chat server (first chunk after 300 ms, then 50 tokens/s) and a fake
 *   OpenAI speech server (first audio after 100 ms). Their CPU is measured and reported apart;
 * - the sessions (`bench/pipeline-sessions.ts`), one fresh process per run and N: Silero VAD in process (one
 *   model, batched across streams), N CallSessions fed in real time by simulated callers on one 20 ms frame
 *   clock, each with a simulated carrier that plays the agent's audio in real time and acknowledges marks
 *   (`bench/pipeline-carrier.ts`: the test carrier's playback without its recording). The callers and carriers
 *   are plain function calls inside that process (no transport): their own cost is a frame lookup and a queue
 *   walk per 20 ms, included in the session process's CPU. Answering machine detection (a per-call cost of the
 *   first 8 s of outbound calls) is off, as for inbound calls, unless `--voicemail`.
 *
 * Per N: voice to voice and pipeline overhead over all turns, from the sessions' own per-turn latency (the
 * overhead is voice to voice less the wait until the turn was decided, the model's time to its first clause
 * and the TTS first audio, each as the session measured it: read here term by term, and checked to add up);
 * the same turns on the benchmark's clock (caller's last loud frame due at the carrier -> reply's first audio
 * at the carrier) minus the engines' fixed latencies ("unaccounted": what the pipeline, the loopback and the
 * fakes add). The session's overhead is only the platform's own gaps between stages: event-loop lag that
 * delays reading an engine's answer lands inside that engine's measured time, so "unaccounted" is the figure
 * that shows what a loaded event loop costs a turn. Also: CPU of the session process per session-second;
 * event-loop delay; the share of VAD windows its silence gate answered; RSS growth per session over the idle
 * baseline (after a one-call warm-up; peak while all N were live, without forcing GC: an upper bound); the
 * engines process's CPU; and the machine's load, since other work on the machine shares its cores.
 * Calls per core: 1000 / the session process's CPU ms per session-second, and that CPU split by part (gateway
 * transport, VAD, STT feed, TTS, resampling, playout, recording, HTTP clients to the engines, the simulated callers
 * and carriers, GC, the rest: bench/cpu-parts.ts) from a CPU profile of every measured window (sampled each
 * millisecond, which costs the process a little CPU; `--no-parts` turns it off). Each part with a floor is compared
 * with it, measured in the same process right after the window (bench/pipeline-floors.ts): the VAD part per window
 * the model ran against Silero inference alone at the run's mean batch, the resampling part per 20 ms frame of agent
 * audio against the TTS provider's 24 kHz -> 16 kHz resampling alone.
 * `--cpu-prof` writes a CPU profile of each measured window and prints where the time went; `--turn-log` appends
 * every turn's figures, and each run's timeline (per second: live sessions, CPU, frame lateness), to a file as
 * JSON lines.
 * Replies started before the turn is confirmed (the agent's `behavior.speculative_replies`, on unless
 * `--speculative off`; `both` measures each N with it off, then on, in the same run): how many were started, used
 * and discarded, the discarded share, and the model requests each answered turn added (discarded starts per turn).
 * With `--json` the last line is one JSON object. Everything started is stopped, on failure too.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createTextToSpeech } from '../engines/tts/index.ts';
import { BenchChild } from './api-child.ts';
import { type CallPart, type CallParts, callPartsOfProfile } from './cpu-parts.ts';
import { formatProfile, summarizeProfile } from './pipeline-profile.ts';
import {
  assertLoopback,
  CALLER_LINES,
  type CallerUtterance,
  ENGINE_LATENCY,
  type EnginesWindow,
  FAKE_STT_LOUD_LEVEL,
  FRAME_SAMPLES,
  type FromEngines,
  type FromSessions,
  nominalEngineMs,
  percentile,
  type RunResult,
  type ToEngines,
  type ToSessions,
} from './pipeline-protocol.ts';
import { machineTicks } from './support/proc-stat.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const START_TIMEOUT_MS = 60_000;
/** Silero load, the warm-up call and first connections, on a busy machine. */
const WARMUP_TIMEOUT_MS = 180_000;
/** A speech end this much before the true one is another (earlier) speech end; this much after, the commit's. */
const STALE_SPEECH_END_MS = 300;
const LATE_SPEECH_END_MS = 60;
/** Frames fed later than this (p99) mean the session process's event loop fell behind the frame clock. */
const BEHIND_LATENESS_MS = 40;

interface Options {
  sessions: number[];
  turns: number;
  runs: number;
  json: boolean;
  spreadMs: number;
  cpuProfDir: string | undefined;
  /** Profile every window (in a temporary directory unless --cpu-prof-dir) to split its CPU by part. */
  parts: boolean;
  turnLog: string | undefined;
  voicemail: boolean;
  /** Agent `behavior.speculative_replies` per measurement: [true], [false], or off then on. */
  speculative: boolean[];
}

function positiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`--${name}: expected a positive integer, got "${text}"`);
  return value;
}

function speculativeModes(text: string): boolean[] {
  if (text === 'on') return [true];
  if (text === 'off') return [false];
  if (text === 'both') return [false, true];
  throw new Error(`--speculative: expected on, off or both, got "${text}"`);
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: 'string', default: '1,50,200' },
      turns: { type: 'string', default: '3' },
      runs: { type: 'string', default: '1' },
      spread: { type: 'string', default: '4000' },
      json: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      'cpu-prof-dir': { type: 'string' },
      'turn-log': { type: 'string' },
      voicemail: { type: 'boolean', default: false },
      'no-parts': { type: 'boolean', default: false },
      speculative: { type: 'string', default: 'on' },
    },
    strict: true,
  });
  const sessions = (values.sessions ?? '').split(',').map((s) => positiveInteger('sessions', s.trim()));
  const spreadMs = Number(values.spread);
  if (!Number.isFinite(spreadMs) || spreadMs < 0)
    throw new Error(`--spread: expected ms >= 0, got "${values.spread}"`);
  const wantProfile = values['cpu-prof'] === true || values['cpu-prof-dir'] !== undefined;
  const cpuProfDir = wantProfile
    ? path.resolve(values['cpu-prof-dir'] ?? mkdtempSync(path.join(os.tmpdir(), 'bench-pipeline-prof-')))
    : undefined;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const parts = values['no-parts'] !== true;
  return {
    sessions,
    turns: positiveInteger('turns', values.turns ?? '3'),
    runs: positiveInteger('runs', values.runs ?? '1'),
    json: values.json === true,
    spreadMs,
    cpuProfDir,
    parts,
    turnLog: values['turn-log'] === undefined ? undefined : path.resolve(values['turn-log']),
    voicemail: values.voicemail === true,
    speculative: speculativeModes(values.speculative ?? 'on'),
  };
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// --- cleanup ---------------------------------------------------------------------------------------------

const cleanups: Array<() => Promise<void>> = [];

async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const undo = cleanups.pop();
    try {
      await undo?.();
    } catch (error) {
      log(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

let interrupted = false;

let partsDirectory: string | undefined;

/** Where the profiles that only feed the split by part go: made on first use, removed at the end. */
function partsDir(): string {
  if (partsDirectory) return partsDirectory;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-pipeline-parts-'));
  partsDirectory = dir;
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`bench:pipeline: ${signal}; stopping everything`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// --- machine ---------------------------------------------------------------------------------------------

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return `load average: ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(', ')}`;
  }
}

// --- caller speech ---------------------------------------------------------------------------------------

/** The caller's lines, spoken once by eSpeak NG; warns about pauses long enough to end an utterance early. */
async function callerSpeech(): Promise<CallerUtterance[]> {
  const tts = createTextToSpeech({ espeak: true });
  try {
    const out: CallerUtterance[] = [];
    for (const text of CALLER_LINES) {
      const chunks: Int16Array[] = [];
      for await (const chunk of tts.synthesize({ voiceId: 'local-en-male', text, language: 'en-IN' })) {
        chunks.push(chunk);
      }
      const samples = chunks.reduce((n, c) => n + c.length, 0);
      const bytes = Buffer.alloc(samples * 2);
      let at = 0;
      for (const chunk of chunks) for (const v of chunk) at = bytes.writeInt16LE(v, at);
      const pause = longestInnerPauseMs(bytes);
      if (pause >= ENGINE_LATENCY.sttEndpointingMs) {
        log(`warning: "${text}" has a ${pause} ms pause: the fake STT will end the utterance there`);
      }
      out.push({ text, pcmBase64: bytes.toString('base64') });
    }
    return out;
  } finally {
    await tts.close();
  }
}

function longestInnerPauseMs(pcm: Buffer): number {
  const loud: boolean[] = [];
  for (let at = 0; at + FRAME_SAMPLES * 2 <= pcm.length; at += FRAME_SAMPLES * 2) {
    let sum = 0;
    for (let i = 0; i < FRAME_SAMPLES; i++) sum += Math.abs(pcm.readInt16LE(at + i * 2));
    loud.push(sum / FRAME_SAMPLES >= FAKE_STT_LOUD_LEVEL);
  }
  let run = 0;
  let longest = 0;
  for (let i = loud.indexOf(true); i >= 0 && i <= loud.lastIndexOf(true); i++) {
    run = loud[i] ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest * 20;
}

// --- children --------------------------------------------------------------------------------------------

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only what a Node process needs; no inherited NODE_OPTIONS, proxies or OPENAI_* settings.
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

type EnginesChild = BenchChild<ToEngines, FromEngines>;
type SessionsChild = BenchChild<ToSessions, FromSessions>;

// --- one run ---------------------------------------------------------------------------------------------

/** Every figure of one run; medians over runs are taken field by field. */
interface Figures {
  sessions: number;
  turns: number;
  turns_spoken: number;
  timeouts: number;
  unpaired_sessions: number;
  errors: number;
  interruptions: number;
  /** The agent's `behavior.speculative_replies` in this run (1 on, 0 off). */
  speculative: number;
  /** Replies started before the turn was confirmed; used as the answer; discarded (a model request thrown away). */
  speculative_started: number;
  speculative_used: number;
  speculative_discarded: number;
  /** Share of early starts discarded, and model requests discarded per answered turn (spend added per turn). */
  speculative_discarded_pct: number;
  discarded_requests_per_turn: number;
  voice_to_voice_p50_ms: number;
  voice_to_voice_p95_ms: number;
  overhead_p50_ms: number;
  overhead_p95_ms: number;
  endpoint_p50_ms: number;
  stt_final_p50_ms: number;
  llm_first_token_p50_ms: number;
  llm_first_clause_p50_ms: number;
  /** From the caller stopping to the turn being decided, as the session measured it. */
  decision_wait_p50_ms: number;
  /** Turns whose overhead is not voice to voice less the three terms read here (should be 0). */
  overhead_mismatches: number;
  tts_first_audio_p50_ms: number;
  bench_voice_to_voice_p50_ms: number;
  bench_voice_to_voice_p95_ms: number;
  unaccounted_p50_ms: number;
  unaccounted_p95_ms: number;
  /** Session's voice to voice minus the benchmark's, per turn. */
  voice_to_voice_vs_bench_p50_ms: number;
  /** Where the session put the caller's speech end minus where it was (call time), per turn. */
  speech_end_error_p50_ms: number;
  /** Turns whose speech end the session put more than 300 ms early (a previous turn's, or a pause's). */
  speech_end_stale_turns: number;
  /** Turns whose speech end the session put more than 60 ms late (at the STT's commit). */
  speech_end_late_turns: number;
  cpu_ms_per_session_second: number;
  session_cpu_pct: number;
  event_loop_delay_p50_ms: number;
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
  frame_lateness_p99_ms: number;
  rss_kb_per_session: number;
  heap_kb_per_session: number;
  /** After a forced full GC at full concurrency: RSS, and JS heap plus external memory, over the baseline. */
  rss_after_gc_kb_per_session: number;
  live_kb_per_session: number;
  gc_pause_ms: number;
  rss_baseline_mb: number;
  silero_mean_batch: number;
  /** Share of the VAD's windows answered by its silence gate, without inference. */
  silero_skipped_pct: number;
  /** VAD windows a session was too far behind to wait for the model on, answered by energy instead. */
  silero_shed_windows: number;
  engines_cpu_pct: number;
  engines_cpu_ms_per_session_second: number;
  engines_event_loop_delay_p99_ms: number;
  machine_busy_pct: number;
  others_cpu_pct: number;
  window_s: number;
  session_seconds: number;
  /** 1000 / cpu_ms_per_session_second: calls one core carries, the session process's work alone. */
  calls_per_core: number;
  /** cpu_ms_per_session_second split by part (bench/cpu-parts.ts), from a CPU profile of the window. */
  part_gateway_transport_ms: number;
  part_vad_ms: number;
  part_stt_feed_ms: number;
  part_tts_ms: number;
  part_resampling_ms: number;
  part_playout_ms: number;
  part_recording_ms: number;
  part_http_clients_ms: number;
  part_simulated_callers_ms: number;
  part_gc_ms: number;
  part_rest_ms: number;
  /** The VAD part per window the model ran, against Silero inference alone at the run's mean batch. */
  vad_us_per_window: number;
  silero_floor_us_per_window: number;
  vad_vs_floor: number;
  /** The resampling part per 20 ms frame of agent audio, against 24k -> 16k resampling alone. */
  resampling_us_per_frame: number;
  resampling_floor_us_per_frame: number;
  resampling_vs_floor: number;
}

interface RunOutcome {
  figures: Figures;
  firstError: string | undefined;
  reasons: Record<string, number>;
  atFullConcurrency: boolean;
  loadAtStart: string;
  profile: string | undefined;
}

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function partFigures(result: RunResult, parts: CallParts | undefined) {
  const cpuPerSessionSecond = result.cpuMs / result.sessionSeconds;
  const msOf = (part: CallPart) =>
    parts && parts.busyMs > 0 ? round((parts.ms[part] / parts.busyMs) * cpuPerSessionSecond, 3) : Number.NaN;
  const floors = result.floors;
  const vadUs =
    parts && result.silero.windows > 0 ? (1000 * parts.ms.vad) / result.silero.windows : Number.NaN;
  const agentFrames = result.agentSamples / FRAME_SAMPLES;
  const resamplingUs = parts && agentFrames > 0 ? (1000 * parts.ms.resampling) / agentFrames : Number.NaN;
  return {
    calls_per_core: round(1000 / cpuPerSessionSecond),
    part_gateway_transport_ms: msOf('gateway_transport'),
    part_vad_ms: msOf('vad'),
    part_stt_feed_ms: msOf('stt_feed'),
    part_tts_ms: msOf('tts'),
    part_resampling_ms: msOf('resampling'),
    part_playout_ms: msOf('playout'),
    part_recording_ms: msOf('recording'),
    part_http_clients_ms: msOf('http_clients'),
    part_simulated_callers_ms: msOf('simulated_callers'),
    part_gc_ms: msOf('gc'),
    part_rest_ms: msOf('rest'),
    vad_us_per_window: round(vadUs),
    silero_floor_us_per_window: round(floors.sileroUsPerWindow),
    vad_vs_floor: round(vadUs / floors.sileroUsPerWindow, 2),
    resampling_us_per_frame: round(resamplingUs, 2),
    resampling_floor_us_per_frame: round(floors.resampleUsPerFrame, 2),
    resampling_vs_floor: round(resamplingUs / floors.resampleUsPerFrame, 2),
  };
}

function figuresOf(
  result: RunResult,
  engines: EnginesWindow,
  machinePct: number | undefined,
  parts: CallParts | undefined,
): Figures {
  const nominal = nominalEngineMs();
  const turns = result.turns;
  const pick = (f: (t: (typeof turns)[number]) => number) => turns.map(f);
  const v2v = pick((t) => t.voiceToVoiceMs);
  const overhead = pick((t) => t.overheadMs);
  const clause = pick((t) => t.llmFirstClauseMs);
  const mismatches = turns.filter((t) => {
    const recomputed = t.voiceToVoiceMs - t.decisionWaitMs - t.llmFirstClauseMs - t.ttsFirstAudioMs;
    return Math.abs(Math.max(0, recomputed) - t.overheadMs) > 1e-6;
  }).length;
  const paired = turns.filter((t) => t.benchVoiceToVoiceMs !== undefined);
  const bench = result.benchVoiceToVoiceMs;
  const nominalTotal = nominal.stt + nominal.llmFirstClause + nominal.tts;
  const offsets = paired.map((t) => t.voiceToVoiceMs - (t.benchVoiceToVoiceMs as number));
  const endErrors = turns.flatMap((t) => (t.speechEndErrorMs === undefined ? [] : [t.speechEndErrorMs]));
  const sessionSeconds = result.sessionSeconds;
  const windowS = result.wallMs / 1000;
  const sessionCpuPct = (100 * result.cpuMs) / result.wallMs;
  const enginesCpuPct = (100 * engines.cpuMs) / engines.wallMs;
  const errors = Object.values(result.errors).reduce((a, b) => a + b, 0);
  const mem = result.memory;
  const gcMem = mem.afterGc;
  return {
    sessions: result.sessions,
    turns: turns.length,
    turns_spoken: result.turnsSpoken,
    timeouts: result.timeouts,
    unpaired_sessions: result.unpairedSessions,
    errors,
    interruptions: result.interruptions,
    speculative: result.speculative ? 1 : 0,
    speculative_started: result.speculation.started,
    speculative_used: result.speculation.used,
    speculative_discarded: result.speculation.discarded,
    speculative_discarded_pct: round(
      (100 * result.speculation.discarded) / Math.max(1, result.speculation.started),
    ),
    discarded_requests_per_turn: round(result.speculation.discarded / Math.max(1, turns.length), 3),
    voice_to_voice_p50_ms: round(percentile(v2v, 0.5)),
    voice_to_voice_p95_ms: round(percentile(v2v, 0.95)),
    overhead_p50_ms: round(percentile(overhead, 0.5), 2),
    overhead_p95_ms: round(percentile(overhead, 0.95), 2),
    endpoint_p50_ms: round(
      percentile(
        pick((t) => t.endpointMs),
        0.5,
      ),
    ),
    stt_final_p50_ms: round(
      percentile(
        pick((t) => t.sttFinalMs),
        0.5,
      ),
    ),
    llm_first_token_p50_ms: round(
      percentile(
        pick((t) => t.llmFirstTokenMs),
        0.5,
      ),
    ),
    llm_first_clause_p50_ms: round(percentile(clause, 0.5)),
    decision_wait_p50_ms: round(
      percentile(
        pick((t) => t.decisionWaitMs),
        0.5,
      ),
    ),
    overhead_mismatches: mismatches,
    tts_first_audio_p50_ms: round(
      percentile(
        pick((t) => t.ttsFirstAudioMs),
        0.5,
      ),
    ),
    bench_voice_to_voice_p50_ms: round(percentile(bench, 0.5)),
    bench_voice_to_voice_p95_ms: round(percentile(bench, 0.95)),
    unaccounted_p50_ms: round(percentile(bench, 0.5) - nominalTotal),
    unaccounted_p95_ms: round(percentile(bench, 0.95) - nominalTotal),
    voice_to_voice_vs_bench_p50_ms: round(percentile(offsets, 0.5)),
    speech_end_error_p50_ms: round(percentile(endErrors, 0.5)),
    speech_end_stale_turns: endErrors.filter((e) => e < -STALE_SPEECH_END_MS).length,
    speech_end_late_turns: endErrors.filter((e) => e > LATE_SPEECH_END_MS).length,
    cpu_ms_per_session_second: round(result.cpuMs / sessionSeconds, 2),
    session_cpu_pct: round(sessionCpuPct),
    event_loop_delay_p50_ms: round(result.eventLoop.p50Ms, 2),
    event_loop_delay_p99_ms: round(result.eventLoop.p99Ms, 2),
    event_loop_delay_max_ms: round(result.eventLoop.maxMs, 1),
    frame_lateness_p99_ms: round(result.frameLateness.p99Ms, 2),
    rss_kb_per_session: round((result.memory.peakRssKb - result.memory.baselineRssKb) / result.sessions, 0),
    heap_kb_per_session: round(
      (result.memory.peakHeapKb - result.memory.baselineHeapKb) / result.sessions,
      0,
    ),
    rss_after_gc_kb_per_session: round(
      ((gcMem?.rssKb ?? Number.NaN) - mem.baselineRssKb) / result.sessions,
      0,
    ),
    live_kb_per_session: round(
      ((gcMem?.heapKb ?? Number.NaN) +
        (gcMem?.externalKb ?? 0) -
        mem.baselineHeapKb -
        mem.baselineExternalKb) /
        result.sessions,
      0,
    ),
    gc_pause_ms: round(gcMem?.pauseMs ?? Number.NaN),
    rss_baseline_mb: round(result.memory.baselineRssKb / 1024),
    silero_mean_batch: round(result.silero.runs > 0 ? result.silero.windows / result.silero.runs : 0, 2),
    silero_skipped_pct: round(
      (100 * result.silero.skipped) / Math.max(1, result.silero.windows + result.silero.skipped),
    ),
    silero_shed_windows: result.silero.shed,
    engines_cpu_pct: round(enginesCpuPct),
    engines_cpu_ms_per_session_second: round(engines.cpuMs / sessionSeconds, 2),
    engines_event_loop_delay_p99_ms: round(engines.eventLoop.p99Ms, 2),
    machine_busy_pct: round(machinePct ?? Number.NaN),
    others_cpu_pct:
      machinePct === undefined
        ? Number.NaN
        : round(Math.max(0, machinePct * os.cpus().length - sessionCpuPct - enginesCpuPct)),
    window_s: round(windowS),
    session_seconds: round(sessionSeconds),
    ...partFigures(result, parts),
  };
}

async function runOnce(
  options: Options,
  engines: EnginesChild,
  urls: { stt: string; llm: string; tts: string },
  utterances: CallerUtterance[],
  sessions: number,
  run: number,
  speculative: boolean,
): Promise<RunOutcome> {
  const execArgv = ['--import', 'tsx', '--expose-gc'];
  const child: SessionsChild = new BenchChild(
    `sessions (${sessions})`,
    path.join(ROOT, 'bench/pipeline-sessions.ts'),
    {
      cwd: ROOT,
      env: childEnv(),
      execArgv,
      stdout: process.stderr,
    },
  );
  const stopChild = () => child.stop({ type: 'stop' });
  cleanups.push(stopChild);
  try {
    await child.next('ready', START_TIMEOUT_MS);
    const profileDir = options.cpuProfDir ?? (options.parts ? partsDir() : undefined);
    const cpuProfilePath = profileDir
      ? path.join(
          profileDir,
          `pipeline-sessions-${sessions}-run${run}${speculative ? '' : '-nospec'}.cpuprofile`,
        )
      : undefined;
    child.send({
      type: 'run',
      spec: {
        sessions,
        turns: options.turns,
        urls,
        utterances,
        spreadMs: sessions === 1 ? 0 : options.spreadMs,
        seed: 1000 * run + sessions,
        voicemail: options.voicemail,
        speculative,
        cpuProfilePath,
      },
    });
    await child.next('measure-start', WARMUP_TIMEOUT_MS);
    engines.send({ type: 'window-start' });
    const loadAtStart = uptime();
    const ticksStart = machineTicks();
    // The sessions child gives up on its own well before this (its own deadline); this is the backstop.
    const windowBudgetMs = options.spreadMs + (options.turns + 1) * 30_000 + 60_000;
    await child.next('measure-end', windowBudgetMs);
    const ticksEnd = machineTicks();
    engines.send({ type: 'window-end' });
    const window = (await engines.next('window', 10_000)).window;
    const result = (await child.next('result', 60_000)).result;
    const machinePct =
      ticksStart && ticksEnd && ticksEnd.total > ticksStart.total
        ? (100 * (ticksEnd.busy - ticksStart.busy)) / (ticksEnd.total - ticksStart.total)
        : undefined;
    const reasons: Record<string, number> = {};
    for (const t of result.turns) reasons[t.endReason] = (reasons[t.endReason] ?? 0) + 1;
    if (options.turnLog) {
      const lines = result.turns.map((t) => JSON.stringify({ run, sessions, ...t }));
      lines.push(
        JSON.stringify({ run, sessions, timeline: result.timeline, timeoutTraces: result.timeoutTraces }),
      );
      appendFileSync(options.turnLog, lines.length > 0 ? `${lines.join('\n')}\n` : '');
    }
    return {
      figures: figuresOf(
        result,
        window,
        machinePct,
        cpuProfilePath && options.parts ? callPartsOfProfile(cpuProfilePath) : undefined,
      ),
      firstError: result.firstError,
      reasons,
      atFullConcurrency: result.memory.atFullConcurrency,
      loadAtStart,
      profile: options.cpuProfDir ? cpuProfilePath : undefined,
    };
  } finally {
    cleanups.splice(cleanups.indexOf(stopChild), 1);
    await stopChild();
  }
}

function median(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = Math.floor(finite.length / 2);
  return finite.length % 2 === 1
    ? (finite[mid] as number)
    : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
}

const SUMMED: ReadonlyArray<keyof Figures> = [
  'speech_end_stale_turns',
  'speech_end_late_turns',
  'turns',
  'turns_spoken',
  'timeouts',
  'unpaired_sessions',
  'errors',
  'interruptions',
  'overhead_mismatches',
  'speculative_started',
  'speculative_used',
  'speculative_discarded',
];

function combine(runs: Figures[]): Figures {
  const first = runs[0] as Figures;
  const out = { ...first };
  for (const key of Object.keys(first) as Array<keyof Figures>) {
    const values = runs.map((r) => r[key]);
    out[key] = SUMMED.includes(key) ? values.reduce((a, b) => a + b, 0) : round(median(values), 2);
  }
  return out;
}

// --- output ----------------------------------------------------------------------------------------------

function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function report(figures: Figures, outcomes: RunOutcome[], runs: number): string[] {
  const f = figures;
  const n = nominalEngineMs();
  const reasons: Record<string, number> = {};
  for (const o of outcomes)
    for (const [k, v] of Object.entries(o.reasons)) reasons[k] = (reasons[k] ?? 0) + v;
  const lines = [
    `N=${f.sessions}${f.speculative ? '' : ' (speculative replies OFF)'}  turns measured ${f.turns} of ${f.turns_spoken} spoken` +
      (runs > 1 ? ` (${runs} runs; figures are medians of the runs)` : '') +
      `  timeouts ${f.timeouts}  errors ${f.errors}  sessions with unpaired turns ${f.unpaired_sessions}` +
      `  turn ends: ${Object.entries(reasons)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    `  session accounting: voice to voice p50 ${fmt(f.voice_to_voice_p50_ms)} p95 ${fmt(f.voice_to_voice_p95_ms)} ms;` +
      ` pipeline overhead p50 ${fmt(f.overhead_p50_ms, 2)} p95 ${fmt(f.overhead_p95_ms, 2)} ms` +
      ` (voice to voice less the decision wait, llm first clause and tts first audio` +
      (f.overhead_mismatches > 0 ? `; ${f.overhead_mismatches} turns DO NOT ADD UP)` : ')'),
    `    stage p50: endpoint ${fmt(f.endpoint_p50_ms)}  stt final ${fmt(f.stt_final_p50_ms)} (served ${n.stt})` +
      `  decision wait ${fmt(f.decision_wait_p50_ms)}` +
      `  llm first token ${fmt(f.llm_first_token_p50_ms)} (served ${n.llmFirstToken})` +
      `  llm first clause ${fmt(f.llm_first_clause_p50_ms)} (served ${n.llmFirstClause})` +
      `  tts first audio ${fmt(f.tts_first_audio_p50_ms)} (served ${n.tts}) ms`,
    `  benchmark clock: voice to voice p50 ${fmt(f.bench_voice_to_voice_p50_ms)} p95 ${fmt(f.bench_voice_to_voice_p95_ms)} ms;` +
      ` minus the engines' ${n.stt + n.llmFirstClause + n.tts} ms as served = unaccounted p50 ${fmt(f.unaccounted_p50_ms)}` +
      ` p95 ${fmt(f.unaccounted_p95_ms)} ms`,
    `  replies started before the turn was confirmed: ${f.speculative ? 'on' : 'off'}; started ${f.speculative_started},` +
      ` used ${f.speculative_used}, discarded ${f.speculative_discarded}` +
      ` (discarded share ${fmt(f.speculative_discarded_pct)}%); model spend added: ${fmt(f.discarded_requests_per_turn, 3)}` +
      ` discarded requests per answered turn`,
    `  session's speech end minus the true one: p50 ${fmt(f.speech_end_error_p50_ms)} ms;` +
      ` stale (> ${STALE_SPEECH_END_MS} ms early) in ${f.speech_end_stale_turns} turns,` +
      ` late (> ${LATE_SPEECH_END_MS} ms, at the STT commit) in ${f.speech_end_late_turns} turns;` +
      ` session v2v minus ours p50 ${fmt(f.voice_to_voice_vs_bench_p50_ms)} ms`,
    `  session process: ${fmt(f.cpu_ms_per_session_second, 2)} ms CPU per session-second` +
      ` (${fmt(f.session_cpu_pct)}% of a core over ${fmt(f.window_s)} s, ${fmt(f.session_seconds)} session-s)` +
      `  event-loop delay p50 ${fmt(f.event_loop_delay_p50_ms, 2)} p99 ${fmt(f.event_loop_delay_p99_ms, 2)}` +
      ` max ${fmt(f.event_loop_delay_max_ms)} ms  frame clock late p99 ${fmt(f.frame_lateness_p99_ms, 2)} ms` +
      `  Silero mean batch ${fmt(f.silero_mean_batch, 1)}, windows skipped as silence ${fmt(f.silero_skipped_pct)}%, shed (late, answered by energy) ${f.silero_shed_windows}`,
    `  memory per session over a ${fmt(f.rss_baseline_mb)} MB idle baseline: peak RSS +${fmt(f.rss_kb_per_session, 0)} KB` +
      ` (heap +${fmt(f.heap_kb_per_session, 0)} KB, no forced GC` +
      (outcomes.every((o) => o.atFullConcurrency) ? ', all sessions live)' : ', NOT at full concurrency)') +
      `; after a full GC with all live: RSS +${fmt(f.rss_after_gc_kb_per_session, 0)} KB,` +
      ` JS heap + external +${fmt(f.live_kb_per_session, 0)} KB (GC pause ${fmt(f.gc_pause_ms)} ms)`,
    `  engines process: ${fmt(f.engines_cpu_pct)}% of a core (${fmt(f.engines_cpu_ms_per_session_second, 2)} ms per` +
      ` session-second), event-loop delay p99 ${fmt(f.engines_event_loop_delay_p99_ms, 2)} ms;` +
      `  machine ${fmt(f.machine_busy_pct)}% busy (of ${os.cpus().length} cores), others ~${fmt(f.others_cpu_pct)}% of a core`,
    ...partLines(f),
  ];
  if (f.timeouts > 0) {
    lines.push(
      `  OVERLOADED: the session process did not keep up (frames fed up to ${fmt(f.frame_lateness_p99_ms, 0)} ms` +
        ` late at p99, ${f.timeouts} replies timed out): these are not steady-state figures`,
    );
  } else if (f.frame_lateness_p99_ms > BEHIND_LATENESS_MS) {
    lines.push(
      `  BEHIND REAL TIME at moments: frames fed up to ${fmt(f.frame_lateness_p99_ms, 0)} ms late at p99` +
        ` (the session process's CPU is ${fmt(f.session_cpu_pct)}% of a core; see the machine's load)`,
    );
  }
  for (const o of outcomes) lines.push(`  load at start: ${o.loadAtStart}`);
  const error = outcomes.find((o) => o.firstError)?.firstError;
  if (error) lines.push(`  first error: ${error}`);
  return lines;
}

function partLines(f: Figures): string[] {
  if (!Number.isFinite(f.part_rest_ms)) return [];
  const cpu = f.cpu_ms_per_session_second;
  const part = (label: string, ms: number) => `${label} ${fmt(ms, 2)} (${fmt((100 * ms) / cpu, 0)}%)`;
  return [
    `  calls per core ${fmt(f.calls_per_core, 0)} (1000 / ${fmt(cpu, 2)} ms CPU per call-second); by part, ms per` +
      ` call-second: ${[
        part('gateway transport', f.part_gateway_transport_ms),
        part('VAD', f.part_vad_ms),
        part('STT feed', f.part_stt_feed_ms),
        part('TTS', f.part_tts_ms),
        part('resampling', f.part_resampling_ms),
        part('playout', f.part_playout_ms),
        part('recording', f.part_recording_ms),
        part('HTTP clients to the engines', f.part_http_clients_ms),
        part('simulated callers and carriers', f.part_simulated_callers_ms),
        part('GC', f.part_gc_ms),
        part('the rest', f.part_rest_ms),
      ].join(', ')}`,
    `    against the floors measured in the same run: VAD ${fmt(f.vad_us_per_window)} µs per window the model ran,` +
      ` Silero inference alone ${fmt(f.silero_floor_us_per_window)} (x${fmt(f.vad_vs_floor, 2)});` +
      ` resampling ${fmt(f.resampling_us_per_frame, 2)} µs per 20 ms frame of agent audio, alone` +
      ` ${fmt(f.resampling_floor_us_per_frame, 2)} (x${fmt(f.resampling_vs_floor, 2)})`,
  ];
}

// --- main ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const budgetMs =
    120_000 +
    options.runs *
      options.sessions.length *
      (WARMUP_TIMEOUT_MS + options.spreadMs + (options.turns + 1) * 30_000);
  const watchdog = setTimeout(() => {
    log(`bench:pipeline: still running after ${Math.round(budgetMs / 1000)} s; stopping everything`);
    void cleanUp().finally(() => process.exit(1));
  }, budgetMs);
  watchdog.unref();

  const loadBefore = uptime();
  log(`machine: ${loadBefore}`);
  log(`making the caller's ${CALLER_LINES.length} lines with eSpeak NG...`);
  const utterances = await callerSpeech();

  const engines: EnginesChild = new BenchChild('engines', path.join(ROOT, 'bench/pipeline-engines.ts'), {
    cwd: ROOT,
    env: childEnv(),
    execArgv: ['--import', 'tsx'],
    stdout: process.stderr,
  });
  cleanups.push(() => engines.stop({ type: 'stop' }));
  const ready = await engines.next('ready', START_TIMEOUT_MS);
  for (const url of Object.values(ready.urls)) assertLoopback(url);

  const outcomes = new Map<string, RunOutcome[]>();
  const keyOf = (sessions: number, speculative: boolean) =>
    `${sessions}${speculative ? '' : '_no_speculative'}`;
  for (let run = 1; run <= options.runs; run++) {
    for (const sessions of options.sessions) {
      for (const speculative of options.speculative) {
        log(
          `run ${run}/${options.runs}: ${sessions} sessions x ${options.turns} turns` +
            ` (speculative replies ${speculative ? 'on' : 'off'})...`,
        );
        const outcome = await runOnce(options, engines, ready.urls, utterances, sessions, run, speculative);
        const f = outcome.figures;
        log(
          `  v2v p50 ${fmt(f.voice_to_voice_p50_ms)} bench v2v p50 ${fmt(f.bench_voice_to_voice_p50_ms)}` +
            ` overhead p50 ${fmt(f.overhead_p50_ms, 2)} p95 ${fmt(f.overhead_p95_ms, 2)}` +
            ` unaccounted p50 ${fmt(f.unaccounted_p50_ms)}; cpu ${fmt(f.cpu_ms_per_session_second, 2)} ms/session-s;` +
            ` ${f.turns} turns; early starts ${f.speculative_started}, discarded ${f.speculative_discarded}`,
        );
        const key = keyOf(sessions, speculative);
        outcomes.set(key, [...(outcomes.get(key) ?? []), outcome]);
      }
    }
  }
  await cleanUp();
  clearTimeout(watchdog);
  const loadAfter = uptime();

  const n = nominalEngineMs();
  console.log(
    `Pipeline at N concurrent sessions: ${options.turns} caller turns each, frames in real time; engines in their own` +
      ` process on 127.0.0.1 with fixed latency (STT speech_final ${ENGINE_LATENCY.sttEndpointingMs} ms after speech,` +
      ` served at ${n.stt} ms on 20 ms windows; LLM first chunk ${ENGINE_LATENCY.llmFirstTokenMs} ms then` +
      ` ${ENGINE_LATENCY.llmTokensPerSecond} tokens/s, first clause complete at ${n.llmFirstClause} ms;` +
      ` TTS first audio ${ENGINE_LATENCY.ttsFirstAudioMs} ms). ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, Node ${process.version}.`,
  );
  console.log(`load before: ${loadBefore}`);
  console.log(`load after:  ${loadAfter}`);
  const json: Record<string, unknown> = {};
  for (const sessions of options.sessions) {
    for (const speculative of options.speculative) {
      const key = keyOf(sessions, speculative);
      const list = outcomes.get(key) ?? [];
      const figures = combine(list.map((o) => o.figures));
      for (const line of report(figures, list, options.runs)) console.log(line);
      json[`sessions_${key}`] = figures;
    }
  }
  for (const list of outcomes.values()) {
    for (const o of list) {
      if (!o.profile) continue;
      console.log(`CPU profile of the session process, ${o.figures.sessions} sessions: ${o.profile}`);
      for (const line of formatProfile(summarizeProfile(o.profile, ROOT))) console.log(line);
    }
  }
  if (options.json) {
    json['load_before'] = loadBefore;
    json['load_after'] = loadAfter;
    json['runs'] = options.runs;
    json['turns_per_session'] = options.turns;
    json['stt'] = 'deepgram-compatible live (speech_final)';
    console.log(JSON.stringify(json));
  }
}

main().catch(async (error: unknown) => {
  // After a signal the children are being stopped on purpose: their exits are not the failure.
  if (interrupted) return;
  log(`bench:pipeline failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp();
  process.exit(1);
});
