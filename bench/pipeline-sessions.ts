/**
 * The system under test of `bench/pipeline.ts`: N CallSessions in this process, wired as production wires
 * them (one Silero VAD shared and batched across streams, one Deepgram-compatible STT, one OpenAI-compatible
 * chat model and one voice router over OpenAI-compatible speech, the engines on 127.0.0.1 in another process),
 * each fed by a simulated caller and played out by a simulated carrier.
 *
 * One frame clock drives every session: a single timer wakes every 20 ms and hands each live session the frame
 * that is due (caller speech or silence), then lets its carrier play 20 ms of agent audio and acknowledge marks.
 * Behind schedule, the frames that fell due meanwhile follow one per turn of the event loop. Each caller
 * waits for the greeting, then says its lines one after the other, each after the previous reply has played out
 * and a short pause; after the last reply it hangs up.
 *
 * Besides the sessions' own per-turn latency, every turn is timed on the benchmark's clock: from the moment the
 * caller's last loud frame was due at the carrier (scheduled, not when the loop got to it) to the moment the
 * reply's first audio reached the carrier.
 */

import { writeFile } from 'node:fs/promises';
import { Session as InspectorSession } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentSettings } from '../core/agents/types.ts';
import type { TurnLatency } from '../core/store/call-latency.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import { DeepgramTranscriber } from '../engines/stt/providers/deepgram.ts';
import { createTextToSpeech, type VoiceRouter } from '../engines/tts/index.ts';
import { LIVE_MAX_BACKLOG_WINDOWS, SileroVad } from '../engines/vad/providers/silero.ts';
import type { LatencyAccount } from '../pipeline/latency.ts';
import {
  CallSession,
  type SessionEngines,
  type SessionEvent,
  type SessionOutcome,
} from '../pipeline/session.ts';
import { PlaybackCarrier } from './pipeline-carrier.ts';
import { measureFloors } from './pipeline-floors.ts';
import {
  AGENT_GREETING,
  assertLoopback,
  type CpuSample,
  cpuMs,
  cpuSample,
  type DelayFigures,
  ENGINE_LATENCY,
  FAKE_STT_LOUD_LEVEL,
  FRAME_MS,
  FRAME_SAMPLES,
  percentile,
  type RunResult,
  type RunSpec,
  sendToParent,
  type ToSessions,
  type TurnRecord,
} from './pipeline-protocol.ts';

const ELD_RESOLUTION_MS = 10;
/** A reply (or the greeting) that has not played out this long after the caller stopped is given up on. */
const REPLY_TIMEOUT_FRAMES = 20_000 / FRAME_MS;
/** Caller pause after the agent finished, before speaking: 300-900 ms, varied so calls drift apart. */
const GAP_MIN_FRAMES = 15;
const GAP_SPREAD_FRAMES = 30;
/** Memory is sampled this often while sessions run. */
const MEMORY_SAMPLE_FRAMES = 50;
/** The forced GC for the live-memory sample: this long after the last session started (2 s). */
const GC_SAMPLE_AFTER_FRAMES = 100;
/** The run's timeline has one point per second. */
const TIMELINE_FRAMES = 50;
/** Events kept per call for the timeout trace, and traces reported. */
const RECENT_EVENTS = 12;
const MAX_TIMEOUT_TRACES = 3;
const CLOSE_TIMEOUT_MS = 10_000;

const AGENT: AgentSettings = {
  name: 'Asha',
  draft: false,
  archived: false,
  system_prompt: 'You are Asha from Acme. Help the caller with their order. Keep answers short.',
  first_message: AGENT_GREETING,
  language: 'en-IN',
  secondary_languages: [],
  voice: { voice_id: 'openai-alloy', language: 'en-IN' },
  max_duration_secs: 600,
  end_call: { enabled: false, message: 'Goodbye!', confirm: false, after_silence_reprompts: 0 },
  voicemail: { action: 'hangup' },
  background_sound: { sound: 'off' },
  behavior: {
    interruptions: 'normal',
    adaptive_interruptions: true,
    min_interrupt_ms: 300,
    min_words: 0,
    endpointing_ms: 500,
    // Latency is measured turn by turn; a re-prompt in a scripted pause would only add noise.
    silence_reprompt_secs: 0,
    silence_reprompt_message: '',
    dnc_on_opt_out: false,
    speculative_replies: true,
  },
  analysis: { enabled: false },
  tools: [],
};

/** One caller line cut into 20 ms frames once, shared (read only) by every simulated caller. */
interface Line {
  frames: Int16Array[];
  /** Index of the last frame the fake STT hears as loud: where the caller stops speaking. */
  lastLoudFrame: number;
}

function decodeLine(pcmBase64: string): Line {
  const bytes = Buffer.from(pcmBase64, 'base64');
  const pcm = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
  const frames: Int16Array[] = [];
  let lastLoudFrame = -1;
  for (let at = 0; at < pcm.length; at += FRAME_SAMPLES) {
    const frame = new Int16Array(FRAME_SAMPLES);
    frame.set(pcm.subarray(at, at + FRAME_SAMPLES));
    let sum = 0;
    for (const v of frame) sum += Math.abs(v);
    if (sum / FRAME_SAMPLES >= FAKE_STT_LOUD_LEVEL) lastLoudFrame = frames.length;
    frames.push(frame);
  }
  if (lastLoudFrame < 0) throw new Error('a caller line has no loud frame');
  return { frames, lastLoudFrame };
}

/** Deterministic pseudo-random numbers (a small LCG): the same seed gives the same run. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

type Phase = 'idle' | 'greeting' | 'gap' | 'speaking' | 'awaiting' | 'done';

interface Shared {
  engines: SessionEngines;
  lines: Line[];
  turns: number;
  silence: Int16Array;
  /** Answering machine detection over the first seconds of each call (the session's default) or not. */
  voicemail: boolean;
  /** The agent's `behavior.speculative_replies`. */
  speculative: boolean;
  onError: (stage: string, message: string) => void;
}

/** One call: the session, its carrier, and the caller's script. */
class SimulatedCall {
  phase: Phase = 'idle';
  session: CallSession | undefined;
  private carrier: PlaybackCarrier | undefined;
  private agentTurns = 0;
  private agentTurnsBefore = 0;
  private spoken = 0;
  private lineFrame = 0;
  private waitUntil = 0;
  private awaitingSince = 0;
  /** Per utterance spoken: when its last loud frame was due, and when the reply's first audio came. */
  private readonly speechEnds: number[] = [];
  private readonly firstAudios: Array<number | undefined> = [];
  /** Per utterance spoken: call time (ms of audio fed) at the end of its last loud frame. */
  private readonly speechEndCallMs: number[] = [];
  private framesFed = 0;
  private awaitingFirstAudio = false;
  private readonly latencies: Array<{ latency: TurnLatency; account: LatencyAccount }> = [];
  private readonly endReasons: string[] = [];
  startedAtMs = 0;
  stoppedAtMs = 0;
  timeouts = 0;
  interruptions = 0;
  /** Replies started before the turn was confirmed, and what became of them. */
  readonly speculation = { started: 0, used: 0, discarded: 0 };
  /** The session's last events (call time ms:type) when a reply first timed out, to tell why. */
  timeoutTrace: string | undefined;
  private readonly recent: string[] = [];

  constructor(
    private readonly shared: Shared,
    readonly startFrame: number,
    private readonly rand: () => number,
  ) {}

  /** One frame of the clock: `scheduledMs` is when this frame was due. */
  step(frameIndex: number, scheduledMs: number): void {
    if (this.phase === 'done') return;
    if (this.phase === 'idle') {
      if (frameIndex < this.startFrame) return;
      this.open(frameIndex);
    }
    const session = this.session as CallSession;
    if (!this.advance(frameIndex)) return;
    let frame = this.shared.silence;
    if (this.phase === 'speaking') {
      const line = this.line();
      frame = line.frames[this.lineFrame] as Int16Array;
      if (this.lineFrame === line.lastLoudFrame) {
        this.speechEnds.push(scheduledMs);
        this.speechEndCallMs.push((this.framesFed + 1) * FRAME_MS);
        this.firstAudios.push(undefined);
        this.awaitingFirstAudio = true;
      }
      this.lineFrame++;
      if (this.lineFrame >= line.frames.length) {
        this.phase = 'awaiting';
        this.awaitingSince = frameIndex;
      }
    }
    session.audio(frame);
    this.framesFed++;
    this.carrier?.tick();
  }

  /** Everything the caller saw, as turn records (paired with the benchmark's clock when they match up). */
  records(outcome: SessionOutcome | undefined): { turns: TurnRecord[]; paired: boolean } {
    const paired = this.latencies.length === this.speechEnds.length;
    // The session's own speech end of each caller turn is the end of that turn in its transcript.
    const sessionEnds = (outcome?.transcript ?? []).filter((t) => t.speaker === 'caller').map((t) => t.endMs);
    const turns = this.latencies.map(({ latency: l, account }, i): TurnRecord => {
      const end = this.speechEnds[i];
      const audio = this.firstAudios[i];
      const trueEnd = this.speechEndCallMs[i];
      const sessionEnd = sessionEnds[i];
      return {
        endpointMs: l.endpoint_ms,
        sttFinalMs: l.stt_final_ms,
        llmFirstTokenMs: l.llm_first_token_ms,
        ttsFirstAudioMs: l.tts_first_audio_ms,
        voiceToVoiceMs: l.voice_to_voice_ms,
        overheadMs: l.pipeline_overhead_ms,
        decisionWaitMs: account.decisionWaitMs,
        llmFirstClauseMs: account.llmFirstClauseMs,
        benchVoiceToVoiceMs: paired && end !== undefined && audio !== undefined ? audio - end : undefined,
        endReason: this.endReasons[i] ?? 'unknown',
        speechEndErrorMs:
          paired && trueEnd !== undefined && sessionEnd !== undefined ? sessionEnd - trueEnd : undefined,
      };
    });
    return { turns, paired };
  }

  /** Per utterance answered: the benchmark's voice to voice (its last loud frame due -> reply's first audio). */
  benchVoiceToVoice(): number[] {
    return this.speechEnds.flatMap((end, i) => {
      const audio = this.firstAudios[i];
      return audio === undefined ? [] : [audio - end];
    });
  }

  get utterancesSpoken(): number {
    return this.speechEnds.length;
  }

  private line(): Line {
    return this.shared.lines[this.spoken % this.shared.lines.length] as Line;
  }

  private open(frameIndex: number): void {
    const carrier = new PlaybackCarrier();
    carrier.onAudio = () => {
      if (!this.awaitingFirstAudio) return;
      this.awaitingFirstAudio = false;
      this.firstAudios[this.firstAudios.length - 1] = performance.now();
    };
    const session = new CallSession({
      agent: { ...AGENT, behavior: { ...AGENT.behavior, speculative_replies: this.shared.speculative } },
      variables: {},
      engines: this.shared.engines,
      output: carrier,
      ...(this.shared.voicemail ? {} : { voicemail: false as const }),
      onEvent: (event) => this.onEvent(event),
      onLatency: (latency, account) => this.latencies.push({ latency, account }),
      onSpeculation: (outcome) => this.speculation[outcome]++,
    });
    carrier.onAck = (name, dropped) => session.playbackAck(name, dropped);
    this.carrier = carrier;
    this.session = session;
    this.startedAtMs = performance.now();
    this.phase = 'greeting';
    this.awaitingSince = frameIndex;
    session.start();
  }

  private onEvent(event: SessionEvent): void {
    if (event.type !== 'transcript') {
      const detail = event.type === 'interruption' ? `:${event.event.type}` : '';
      this.recent.push(`${this.framesFed * FRAME_MS}:${event.type}${detail}`);
      if (this.recent.length > RECENT_EVENTS) this.recent.shift();
    }
    if (event.type === 'agent_turn') this.agentTurns++;
    else if (event.type === 'caller_turn') this.endReasons.push(event.reason);
    else if (event.type === 'interruption' && event.event.type === 'interrupted') this.interruptions++;
    else if (event.type === 'error') this.shared.onError(event.stage, event.message);
  }

  /** Moves the caller's script on; false once the caller has hung up. */
  private advance(frameIndex: number): boolean {
    if (this.phase === 'greeting' || this.phase === 'awaiting') {
      const answered = this.agentTurns > this.agentTurnsBefore;
      const timedOut = frameIndex - this.awaitingSince >= REPLY_TIMEOUT_FRAMES;
      if (!answered && !timedOut) return true;
      if (timedOut && !answered) {
        this.timeouts++;
        this.timeoutTrace ??= `at ${this.framesFed * FRAME_MS} ms (${this.phase}): ${this.recent.join(' ')}`;
      }
      this.agentTurnsBefore = this.agentTurns;
      if (this.phase === 'awaiting') this.spoken++;
      if (this.spoken >= this.shared.turns) {
        this.hangUp();
        return false;
      }
      this.phase = 'gap';
      this.waitUntil = frameIndex + GAP_MIN_FRAMES + Math.floor(this.rand() * GAP_SPREAD_FRAMES);
      return true;
    }
    if (this.phase === 'gap' && frameIndex >= this.waitUntil) {
      this.phase = 'speaking';
      this.lineFrame = 0;
      this.agentTurnsBefore = this.agentTurns;
    }
    return true;
  }

  hangUp(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.stoppedAtMs = performance.now();
    this.session?.stopped();
  }
}

interface Window {
  cpu: CpuSample;
  silero: { runs: number; windows: number; skipped: number; shed: number };
}

/** Runs callers on one frame clock until every one has hung up (or the deadline passes). */
async function runCalls(
  calls: SimulatedCall[],
  deadlineMs: number,
  onFrame: (frameIndex: number, live: number, lateMs: number) => void,
): Promise<number[]> {
  const lateness: number[] = [];
  const startMs = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const wake = (): void => {
      const now = performance.now();
      const scheduled = startMs + next * FRAME_MS;
      if (scheduled <= now) {
        lateness.push(now - scheduled);
        let live = 0;
        for (const call of calls) {
          call.step(next, scheduled);
          if (call.phase !== 'done' && call.phase !== 'idle') live++;
        }
        onFrame(next, live, now - scheduled);
        next++;
      }
      const finished = calls.every((c) => c.phase === 'done');
      if (finished || now - startMs > deadlineMs) {
        for (const call of calls) call.hangUp();
        resolve();
        return;
      }
      // Behind schedule, the frames that fell due go in one per turn of the event loop, with I/O in between, as
      // sockets holding a backlog would deliver them; never all at once in one long synchronous burst.
      const dueInMs = startMs + next * FRAME_MS - performance.now();
      if (dueInMs <= 0) setImmediate(wake);
      else setTimeout(wake, dueInMs);
    };
    wake();
  });
  return lateness;
}

function figures(values: number[]): DelayFigures {
  return {
    p50Ms: percentile(values, 0.5),
    p99Ms: percentile(values, 0.99),
    maxMs: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

function errorRecorder(): {
  errors: Record<string, number>;
  first: () => string | undefined;
  record: (stage: string, message: string) => void;
} {
  const errors: Record<string, number> = {};
  let first: string | undefined;
  return {
    errors,
    first: () => first,
    record: (stage, message) => {
      errors[stage] = (errors[stage] ?? 0) + 1;
      first ??= `${stage}: ${message}`;
    },
  };
}

function makeCalls(shared: Shared, count: number, spreadMs: number, seed: number): SimulatedCall[] {
  const rand = random(seed);
  const spreadFrames = Math.round(spreadMs / FRAME_MS);
  return Array.from(
    { length: count },
    (_, i) => new SimulatedCall(shared, count === 1 ? 0 : Math.floor((i * spreadFrames) / count), rand),
  );
}

function deadlineFor(spec: RunSpec, turns: number): number {
  // Greeting and each turn: at most the reply timeout; plus the spread and a margin.
  return spec.spreadMs + (turns + 1) * (REPLY_TIMEOUT_FRAMES * FRAME_MS + 8_000) + 10_000;
}

/** One call of one turn, so the measured run does not pay for first-time compilation and connections. */
async function warmUp(shared: Shared, spec: RunSpec): Promise<void> {
  const warm = errorRecorder();
  const calls = makeCalls({ ...shared, turns: 1, onError: warm.record }, 1, 0, spec.seed + 1);
  await runCalls(calls, deadlineFor(spec, 1), () => {});
  await Promise.all(calls.map((c) => c.session?.finished));
  if (warm.first()) throw new Error(`warm-up call failed: ${warm.first()}`);
}

async function run(spec: RunSpec): Promise<RunResult> {
  for (const url of Object.values(spec.urls)) assertLoopback(url);
  const vad = await SileroVad.load({ maxBacklogWindows: LIVE_MAX_BACKLOG_WINDOWS });
  const tts: VoiceRouter = createTextToSpeech({
    espeak: false,
    openai: { baseURL: spec.urls.tts, apiKey: 'bench' },
  });
  const engines: SessionEngines = {
    vad,
    stt: new DeepgramTranscriber({ baseUrl: spec.urls.stt, endpointingMs: ENGINE_LATENCY.sttEndpointingMs }),
    llm: new OpenAiChatModel({ baseURL: spec.urls.llm, model: 'fake-model' }),
    speaker: tts,
  };
  const lines = spec.utterances.map((u) => decodeLine(u.pcmBase64));
  const recorder = errorRecorder();
  const shared: Shared = {
    engines,
    lines,
    turns: spec.turns,
    silence: new Int16Array(FRAME_SAMPLES),
    voicemail: spec.voicemail,
    speculative: spec.speculative,
    onError: recorder.record,
  };

  await warmUp(shared, spec);
  const gc = (globalThis as { gc?: () => void }).gc;
  // Sockets of the warm-up call close, then everything it held is collected: the idle baseline.
  await sleep(1_000);
  gc?.();
  await sleep(200);
  gc?.();
  const baseline = process.memoryUsage();

  const calls = makeCalls(shared, spec.sessions, spec.spreadMs, spec.seed);
  const eventLoop = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  let profiler: InspectorSession | undefined;
  if (spec.cpuProfilePath) {
    profiler = new InspectorSession();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 1000 });
    await profiler.post('Profiler.start');
  }
  let peak = { rss: 0, heap: 0, full: false };
  let fullSince: number | undefined;
  let collected: { rss: number; heap: number; external: number; pauseMs: number } | undefined;
  const timeline: RunResult['timeline'] = [];
  let second = { cpu: cpuSample(), lateMs: 0 };
  sendToParent({ type: 'measure-start' });
  const start: Window = { cpu: cpuSample(), silero: { ...vad.stats } };
  const agentSamplesAtStart = PlaybackCarrier.samplesReceived;
  eventLoop.enable();
  const lateness = await runCalls(calls, deadlineFor(spec, spec.turns), (frame, live, lateMs) => {
    second.lateMs = Math.max(second.lateMs, lateMs);
    if (frame % TIMELINE_FRAMES === 0) {
      const now = cpuSample();
      timeline.push({
        live,
        cpuPct: (100 * cpuMs(second.cpu, now)) / (now.wallMs - second.cpu.wallMs),
        lateMs: second.lateMs,
      });
      second = { cpu: now, lateMs: 0 };
    }
    const full = live === spec.sessions;
    if (!full) fullSince = undefined;
    else fullSince ??= frame;
    // Once, a while into full concurrency: a full GC, then what is left is what the live calls hold.
    if (gc && full && !collected && fullSince !== undefined && frame - fullSince === GC_SAMPLE_AFTER_FRAMES) {
      const before = performance.now();
      gc();
      const pauseMs = performance.now() - before;
      const usage = process.memoryUsage();
      collected = { rss: usage.rss, heap: usage.heapUsed, external: usage.external, pauseMs };
    }
    if (frame % MEMORY_SAMPLE_FRAMES !== 0 || live === 0) return;
    if (peak.full && !full) return;
    const usage = process.memoryUsage();
    if (full && !peak.full) peak = { rss: 0, heap: 0, full: true };
    peak.rss = Math.max(peak.rss, usage.rss);
    peak.heap = Math.max(peak.heap, usage.heapUsed);
  });
  eventLoop.disable();
  const end: Window = { cpu: cpuSample(), silero: { ...vad.stats } };
  const agentSamples = PlaybackCarrier.samplesReceived - agentSamplesAtStart;
  sendToParent({ type: 'measure-end' });
  if (profiler && spec.cpuProfilePath) {
    const { profile } = await profiler.post('Profiler.stop');
    profiler.disconnect();
    await writeFile(spec.cpuProfilePath, JSON.stringify(profile));
  }
  const outcomes = await Promise.all(calls.map((c) => c.session?.finished));

  const turns: TurnRecord[] = [];
  let unpaired = 0;
  let timeouts = 0;
  let interruptions = 0;
  const speculation = { started: 0, used: 0, discarded: 0 };
  let sessionMs = 0;
  let spoken = 0;
  const bench: number[] = [];
  const timeoutTraces: string[] = [];
  for (const [i, call] of calls.entries()) {
    bench.push(...call.benchVoiceToVoice());
    const { turns: records, paired } = call.records(outcomes[i]);
    turns.push(...records);
    if (!paired) unpaired++;
    timeouts += call.timeouts;
    if (call.timeoutTrace && timeoutTraces.length < MAX_TIMEOUT_TRACES) timeoutTraces.push(call.timeoutTrace);
    interruptions += call.interruptions;
    speculation.started += call.speculation.started;
    speculation.used += call.speculation.used;
    speculation.discarded += call.speculation.discarded;
    spoken += call.utterancesSpoken;
    if (call.startedAtMs > 0) sessionMs += (call.stoppedAtMs || end.cpu.wallMs) - call.startedAtMs;
  }
  const delay = (q: number) => Math.max(0, eventLoop.percentile(q) / 1e6 - ELD_RESOLUTION_MS);
  await tts.close();
  const sileroRuns = end.silero.runs - start.silero.runs;
  const floors = await measureFloors(
    vad,
    sileroRuns > 0 ? (end.silero.windows - start.silero.windows) / sileroRuns : 1,
  );
  return {
    sessions: spec.sessions,
    turnsSpoken: spoken,
    turns,
    benchVoiceToVoiceMs: bench,
    timeouts,
    timeoutTraces,
    unpairedSessions: unpaired,
    errors: recorder.errors,
    firstError: recorder.first(),
    interruptions,
    speculative: spec.speculative,
    speculation,
    cpuMs: cpuMs(start.cpu, end.cpu),
    wallMs: end.cpu.wallMs - start.cpu.wallMs,
    sessionSeconds: sessionMs / 1000,
    eventLoop: {
      p50Ms: delay(50),
      p99Ms: delay(99),
      maxMs: Math.max(0, eventLoop.max / 1e6 - ELD_RESOLUTION_MS),
    },
    frameLateness: figures(lateness),
    timeline,
    memory: {
      baselineRssKb: baseline.rss / 1024,
      peakRssKb: peak.rss / 1024,
      baselineHeapKb: baseline.heapUsed / 1024,
      peakHeapKb: peak.heap / 1024,
      atFullConcurrency: peak.full,
      baselineExternalKb: baseline.external / 1024,
      afterGc: collected
        ? {
            rssKb: collected.rss / 1024,
            heapKb: collected.heap / 1024,
            externalKb: collected.external / 1024,
            pauseMs: collected.pauseMs,
          }
        : undefined,
    },
    silero: {
      runs: end.silero.runs - start.silero.runs,
      windows: end.silero.windows - start.silero.windows,
      skipped: end.silero.skipped - start.silero.skipped,
      shed: end.silero.shed - start.silero.shed,
    },
    agentSamples,
    floors,
    cpuProfilePath: spec.cpuProfilePath,
  };
}

let stopping = false;

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(code === 0 ? 1 : code), CLOSE_TIMEOUT_MS);
  force.unref();
  try {
    await SileroVad.releaseAll();
  } catch (error) {
    process.stderr.write(`pipeline-sessions: releasing Silero failed: ${String(error)}\n`);
  }
  process.exit(code);
}

process.on('message', (message: ToSessions) => {
  if (message.type === 'stop') {
    void stop(0);
    return;
  }
  run(message.spec).then(
    (result) => sendToParent({ type: 'result', result }),
    (error: unknown) => {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      sendToParent({ type: 'error', message: text });
      void stop(1);
    },
  );
});
process.on('disconnect', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

if (!process.send) throw new Error('bench/pipeline-sessions.ts is started by bench/pipeline.ts');
sendToParent({ type: 'ready', pid: process.pid });
