/**
 * What `bench/pipeline.ts` (the parent) and its two children share: the engines' fixed latencies, the words
 * said on both sides, and the IPC messages. The engines child (`bench/pipeline-engines.ts`) serves the fake
 * STT, LLM and TTS on 127.0.0.1; the sessions child (`bench/pipeline-sessions.ts`) runs the CallSessions, the
 * simulated callers and carriers. Messages travel over the IPC channel `child_process.fork` opens (JSON).
 */
import { words } from '../engines/llm/testing/fake-openai-chunks.ts';
import { SentenceSplitter } from '../engines/tts/sentences.ts';
import { FIRST_CLAUSE_MIN_CHARS } from '../pipeline/reply.ts';

export const FRAME_MS = 20;
export const FRAME_SAMPLES = 320;

/** The engines' fixed latencies, as the fake servers are configured. */
export const ENGINE_LATENCY = {
  /** Deepgram `endpointing`: the fake sends `speech_final` once this much audio after the last loud window. */
  sttEndpointingMs: 150,
  /** Before the first SSE chunk (the role chunk, empty content); words follow at `llmTokensPerSecond`. */
  llmFirstTokenMs: 300,
  llmTokensPerSecond: 50,
  /** Before the speech response's headers and first bytes. */
  ttsFirstAudioMs: 100,
} as const;

/** The fake Deepgram recognizer judges 20 ms windows by energy (mean |sample| >= 500), as ours does below. */
export const FAKE_STT_LOUD_LEVEL = 500;

/**
 * The caller's lines, spoken by eSpeak NG once. Chosen so that no pause inside them reaches the fake STT's
 * endpointing (a pause of 160 ms would end the utterance early: a second, spurious turn).
 */
export const CALLER_LINES = [
  'I would like to check the status of my order please',
  'Can you tell me when it will be delivered to my home',
  'Please send me the tracking number by message',
  'Could you also confirm my delivery address for me',
  'Thanks a lot for your help with this today',
] as const;

/** What the fake model answers to every turn (first clause: 10 words, so the first audio can start early). */
export const AGENT_REPLY =
  'Sure, I can check that for you right away. Your order should reach you by Friday.';
export const AGENT_GREETING = 'Hello, this is Asha from Acme. How can I help you today?';

/**
 * The engines' share of voice to voice as served, in ms after the caller's speech ended (caller audio time):
 * the fake STT's commit (its windows are 20 ms: the first window at or past the endpointing), the model's
 * time to the delta that completes the first clause (the pipeline's splitter decides which one), and the TTS
 * first byte.
 */
export function nominalEngineMs(): {
  stt: number;
  llmFirstToken: number;
  llmFirstClause: number;
  tts: number;
} {
  const window = FRAME_MS;
  const stt = Math.ceil(ENGINE_LATENCY.sttEndpointingMs / window) * window;
  const tokenMs = 1000 / ENGINE_LATENCY.llmTokensPerSecond;
  const splitter = new SentenceSplitter({ firstClauseMinChars: FIRST_CLAUSE_MIN_CHARS });
  let delta = 0;
  for (const word of words(AGENT_REPLY)) {
    delta++;
    if (splitter.push(word).length > 0) break;
  }
  return {
    stt,
    llmFirstToken: ENGINE_LATENCY.llmFirstTokenMs + tokenMs,
    llmFirstClause: ENGINE_LATENCY.llmFirstTokenMs + delta * tokenMs,
    tts: ENGINE_LATENCY.ttsFirstAudioMs,
  };
}

/** CPU time of one process (µs, from `process.cpuUsage()`) at a monotonic wall time (ms). */
export interface CpuSample {
  userUs: number;
  systemUs: number;
  wallMs: number;
}

export function cpuSample(): CpuSample {
  const usage = process.cpuUsage();
  return { userUs: usage.user, systemUs: usage.system, wallMs: performance.now() };
}

export function cpuMs(from: CpuSample, to: CpuSample): number {
  return (to.userUs - from.userUs + (to.systemUs - from.systemUs)) / 1000;
}

export interface DelayFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

// --- engines child ---------------------------------------------------------------------------------------

export interface EngineUrls {
  /** Deepgram-compatible live STT, `ws://127.0.0.1:<port>`. */
  stt: string;
  /** OpenAI-compatible chat, `http://127.0.0.1:<port>/v1`. */
  llm: string;
  /** OpenAI-compatible speech, `http://127.0.0.1:<port>/v1`. */
  tts: string;
}

export interface EnginesWindow {
  cpuMs: number;
  wallMs: number;
  /** Event-loop delay of the engines process over the window (beyond the sampling interval). */
  eventLoop: DelayFigures;
  sttConnections: number;
  llmRequests: number;
  ttsRequests: number;
}

export type ToEngines = { type: 'window-start' } | { type: 'window-end' } | { type: 'stop' };

export type FromEngines =
  | { type: 'ready'; urls: EngineUrls; pid: number }
  | { type: 'window'; window: EnginesWindow }
  | { type: 'error'; message: string };

// --- sessions child --------------------------------------------------------------------------------------

export interface CallerUtterance {
  text: string;
  /** PCM16 16 kHz mono, little-endian, base64 (JSON IPC). */
  pcmBase64: string;
}

export interface RunSpec {
  sessions: number;
  turns: number;
  urls: EngineUrls;
  utterances: CallerUtterance[];
  /** Session starts are spread evenly over this long. */
  spreadMs: number;
  seed: number;
  /** Keep the session's answering machine detection on (its default; off for inbound calls). */
  voicemail: boolean;
  /** The agent's `behavior.speculative_replies`: replies start before the turn is confirmed. */
  speculative: boolean;
  /** Write a CPU profile of the measured window here (V8 inspector, in process). */
  cpuProfilePath: string | undefined;
}

/** One agent turn: the session's own figures, and the benchmark's clock for the same turn when it could pair them. */
export interface TurnRecord {
  endpointMs: number;
  sttFinalMs: number;
  llmFirstTokenMs: number;
  ttsFirstAudioMs: number;
  voiceToVoiceMs: number;
  /**
   * The session's `pipeline_overhead_ms`: voice to voice less the wait until the turn was decided, the model's
   * time to its first clause and the TTS first audio (the two terms below, and `ttsFirstAudioMs`).
   */
  overheadMs: number;
  /** From the caller stopping to the turn being decided (the session's `LatencyAccount`). */
  decisionWaitMs: number;
  /** From the model request to the first complete clause (the session's `LatencyAccount`). */
  llmFirstClauseMs: number;
  /**
   * From the caller's last loud frame being due at the carrier (scheduled time) to the reply's first audio
   * handed to the carrier; undefined when the session's turns could not be paired with what was spoken.
   */
  benchVoiceToVoiceMs: number | undefined;
  /** How the caller's turn was ended (`stt_commit`, `silence`, ...). */
  endReason: string;
  /**
   * Where the session put the caller's speech end (its transcript's end of the turn) minus where it was (the
   * end of the last loud frame), in call time; undefined when unpaired.
   */
  speechEndErrorMs: number | undefined;
}

export interface RunResult {
  sessions: number;
  turnsSpoken: number;
  turns: TurnRecord[];
  /**
   * The benchmark's voice to voice of every utterance that was answered (whether or not the session's own
   * turns could be paired with what was spoken).
   */
  benchVoiceToVoiceMs: number[];
  /** Replies that never came (the caller went on after the timeout). */
  timeouts: number;
  /** For the first few calls with a timeout: the session's last events (call time ms:type) at that moment. */
  timeoutTraces: string[];
  /** Sessions whose caller turns did not match the utterances spoken one to one. */
  unpairedSessions: number;
  errors: Record<string, number>;
  firstError: string | undefined;
  interruptions: number;
  /** Whether the agent started replies before the turn was confirmed (`RunSpec.speculative`). */
  speculative: boolean;
  /** Replies started before the turn was confirmed: started, used as the turn's answer, discarded. */
  speculation: { started: number; used: number; discarded: number };
  cpuMs: number;
  wallMs: number;
  /** Sum over sessions of the time each was live. */
  sessionSeconds: number;
  eventLoop: DelayFigures;
  /** How late the frame clock fed frames (actual minus scheduled time). */
  frameLateness: DelayFigures;
  /** Per second: live sessions, this process's CPU (percent of a core) and the latest frame's lateness. */
  timeline: Array<{ live: number; cpuPct: number; lateMs: number }>;
  memory: {
    baselineRssKb: number;
    peakRssKb: number;
    baselineHeapKb: number;
    peakHeapKb: number;
    /** Whether the peak was taken while all sessions were live. */
    atFullConcurrency: boolean;
    baselineExternalKb: number;
    /** After one forced full GC, 2 s into full concurrency (the pause stalls every call once). */
    afterGc: { rssKb: number; heapKb: number; externalKb: number; pauseMs: number } | undefined;
  };
  /** Inference runs, windows through the model, and windows of silence the gate answered without it. */
  silero: { runs: number; windows: number; skipped: number; shed: number };
  /** Agent audio the carriers received over the window, in 16 kHz samples (all of it came through the TTS). */
  agentSamples: number;
  /** Measured after the window in the same process. */
  floors: PipelineFloors;
  cpuProfilePath: string | undefined;
}

/** What the pipeline's parts are compared with (bench/pipeline-floors.ts). */
export interface PipelineFloors {
  /** Silero inference alone, CPU µs per 32 ms window, at `sileroBatch` streams batched. */
  sileroUsPerWindow: number;
  sileroBatch: number;
  /** The TTS provider's 24 kHz -> 16 kHz resampling alone, CPU µs per 20 ms frame. */
  resampleUsPerFrame: number;
}

export type ToSessions = { type: 'run'; spec: RunSpec } | { type: 'stop' };

export type FromSessions =
  | { type: 'ready'; pid: number }
  | { type: 'measure-start' }
  | { type: 'measure-end' }
  | { type: 'result'; result: RunResult }
  | { type: 'error'; message: string };

/** Sends a message to the parent; false when the channel has already closed. */
export function sendToParent(message: FromEngines | FromSessions): boolean {
  if (!process.send || !process.connected) return false;
  return process.send(message);
}

/** Nearest-rank percentile, as `summarizeLatency` takes it. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** Only loopback: the benchmark sends no traffic anywhere else. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`refusing a non-loopback engine URL: ${url}`);
}
