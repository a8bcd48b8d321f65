/**
 * The engines of `bench/pipeline.ts`, in a process of their own so that their CPU is not counted as the
 * pipeline's: the fake Deepgram live STT (`speech_final` 150 ms of audio after the speech stops), the fake
 * OpenAI chat server (first chunk after 300 ms, then 50 tokens/s) and the fake OpenAI speech server (first audio
 * after 100 ms), all real servers on 127.0.0.1. Started with `child_process.fork`; it reports its URLs, measures
 * its own CPU and event-loop delay over the windows the parent asks for, and stops on `stop`, SIGTERM, SIGINT
 * or when the parent goes away.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import { FakeOpenAiSpeechServer } from '../engines/tts/testing/fake-openai-speech-server.ts';
import {
  AGENT_REPLY,
  CALLER_LINES,
  type CpuSample,
  cpuMs,
  cpuSample,
  ENGINE_LATENCY,
  sendToParent,
  type ToEngines,
} from './pipeline-protocol.ts';

const CLOSE_TIMEOUT_MS = 10_000;
const ELD_RESOLUTION_MS = 10;

let stt: FakeDeepgramServer | undefined;
let llm: FakeOpenAiServer | undefined;
let tts: FakeOpenAiSpeechServer | undefined;
let stopping = false;
const eventLoop = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
let window: { cpu: CpuSample; stt: number; llm: number; tts: number } | undefined;

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(code === 0 ? 1 : code), CLOSE_TIMEOUT_MS);
  force.unref();
  eventLoop.disable();
  const closing = [stt?.close(), llm?.close(), tts?.close()];
  for (const result of await Promise.allSettled(closing)) {
    if (result.status === 'rejected') {
      process.stderr.write(`pipeline-engines: close failed: ${String(result.reason)}\n`);
      code = code === 0 ? 1 : code;
    }
  }
  process.exit(code);
}

function delayMs(q: number): number {
  return Math.max(0, eventLoop.percentile(q) / 1e6 - ELD_RESOLUTION_MS);
}

function onMessage(message: ToEngines): void {
  if (message.type === 'stop') {
    void stop(0);
    return;
  }
  if (!stt || !llm || !tts) return;
  if (message.type === 'window-start') {
    eventLoop.reset();
    window = {
      cpu: cpuSample(),
      stt: stt.connections.length,
      llm: llm.requests.length,
      tts: tts.requests.length,
    };
    return;
  }
  if (!window) {
    sendToParent({ type: 'error', message: 'window-end without window-start' });
    return;
  }
  const now = cpuSample();
  sendToParent({
    type: 'window',
    window: {
      cpuMs: cpuMs(window.cpu, now),
      wallMs: now.wallMs - window.cpu.wallMs,
      eventLoop: {
        p50Ms: delayMs(50),
        p99Ms: delayMs(99),
        maxMs: Math.max(0, eventLoop.max / 1e6 - ELD_RESOLUTION_MS),
      },
      sttConnections: stt.connections.length - window.stt,
      llmRequests: llm.requests.length - window.llm,
      ttsRequests: tts.requests.length - window.tts,
    },
  });
  window = undefined;
}

process.on('message', onMessage);
process.on('disconnect', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

async function main(): Promise<void> {
  if (!process.send) throw new Error('bench/pipeline-engines.ts is started by bench/pipeline.ts');
  // bench:calls' platform asks for the provider's own endpointing; both benches get the one of ENGINE_LATENCY.
  stt = await FakeDeepgramServer.start({
    transcripts: [...CALLER_LINES],
    endpointingMs: ENGINE_LATENCY.sttEndpointingMs,
  });
  llm = await FakeOpenAiServer.start({
    firstTokenLatencyMs: ENGINE_LATENCY.llmFirstTokenMs,
    tokensPerSecond: ENGINE_LATENCY.llmTokensPerSecond,
    reply: { text: AGENT_REPLY },
  });
  tts = await FakeOpenAiSpeechServer.start({ firstByteDelayMs: ENGINE_LATENCY.ttsFirstAudioMs });
  // The fakes keep every request for tests to read; over a long run only their counts are needed.
  setInterval(() => {
    if (window) return;
    if (llm) llm.requests.length = 0;
    if (tts) tts.requests.length = 0;
    if (stt) {
      const open = stt.connections.filter((c) => c.open);
      stt.connections.length = 0;
      stt.connections.push(...open);
    }
  }, 5_000).unref();
  eventLoop.enable();
  sendToParent({
    type: 'ready',
    urls: { stt: stt.baseUrl, llm: llm.baseURL, tts: tts.baseURL },
    pid: process.pid,
  });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  sendToParent({ type: 'error', message });
  void stop(1);
});
