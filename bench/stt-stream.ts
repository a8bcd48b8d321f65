/**
 * Live speech to text: how many concurrent sessions one gateway process carries.
 *
 *   node --import tsx bench/stt-stream.ts [--json] [--latency-ms 100] [--max 256] [--budget-ms 300]
 *
 * The platform (api and gateway roles, SQLite, in-process coordinator) runs in this process, as one node on one
 * core would. Each session is a real WebSocket client on the gateway's `/v1/audio/transcriptions/stream`, mu-law
 * 8 kHz, `manual` endpointing: `speech_start`, one utterance of eSpeak NG speech (the catalogue's local voice)
 * sent in 100 ms frames at real time, `speech_end`; the figure is the wall time from sending `speech_end` to
 * receiving that utterance's `transcript.final`. Sessions start staggered over one utterance's length, as
 * independent clients would.
 *
 * Two engines, one after the other:
 * - `local`: the resident PocketSphinx decoder (English), where this machine has it;
 * - `deepgram_fake`: a Deepgram-compatible fake (engines/stt/testing) answering after a fixed `--latency-ms`.
 *
 * For each, the number of sessions doubles from 1 while the final-after-speech_end p95 stays under the engine's
 * own latency plus `--budget-ms` (the engine's own latency: the p50 at one session for `local`, the fake's fixed
 * latency for the fake). The largest count that stays under is the engine's figure, divided by the cores this
 * process may use (one Node.js process: one core for JavaScript; the native decoders run on libuv's threads).
 * With `--json` the last line is one JSON object: `{ "cores": n, "local": {...} | null, "deepgram_fake": {...} }`,
 * each engine with `sessions`, `sessions_per_core`, `own_latency_ms` and the `steps` measured
 * (`{sessions, p50_ms, p95_ms, finals, missing}`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { startPlatform } from '../cli/serve.ts';
import { mulawEncode, Resampler } from '../codecs/index.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { provisionWorkspace } from '../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../engines/stt/index.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import { concat } from '../engines/stt/testing/speech.ts';
import { createTextToSpeech } from '../engines/tts/index.ts';
import { percentile } from './calls/stats.ts';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    'latency-ms': { type: 'string', default: '100' },
    max: { type: 'string', default: '256' },
    'budget-ms': { type: 'string', default: '300' },
  },
});
const FAKE_LATENCY_MS = Number(args['latency-ms']);
const MAX_SESSIONS = Number(args.max);
const BUDGET_MS = Number(args['budget-ms']);
const SESSIONS_PER_WORKSPACE = 20;
const PHRASE = 'I would like to speak to an agent about my order.';
const CHUNK_BYTES = 800; // 100 ms of 8 kHz mu-law

interface Step {
  sessions: number;
  p50_ms: number;
  p95_ms: number;
  finals: number;
  missing: number;
}

interface EngineResult {
  sessions: number;
  sessions_per_core: number;
  own_latency_ms: number;
  steps: Step[];
}

const log = (line: string): void => {
  if (!args.json) console.log(line);
  else console.error(line);
};

async function utteranceAudio(): Promise<Buffer> {
  const voices = createTextToSpeech({ espeak: true });
  const chunks: Int16Array[] = [];
  for await (const chunk of voices.synthesize({ voiceId: 'local-en-female', text: PHRASE }))
    chunks.push(chunk);
  await voices.close();
  const resampler = new Resampler(16000, 8000);
  const speech = concat(...chunks);
  const pcm8k = concat(
    new Int16Array(1600),
    resampler.process(speech),
    resampler.flush(),
    new Int16Array(2400),
  );
  return Buffer.from(mulawEncode(pcm8k));
}

/** One session: the latency from speech_end to its final, or undefined when no final came. */
async function session(
  url: string,
  key: string,
  audio: Buffer,
  startDelayMs: number,
): Promise<number | undefined> {
  await sleep(startDelayMs);
  const ws = new WebSocket(
    `${url}/v1/audio/transcriptions/stream?language_code=en-IN&encoding=mulaw&sample_rate=8000`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  let endSentAt = 0;
  let latency: number | undefined;
  const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as { event: string; code?: string };
    if (event.event === 'transcript.final' && latency === undefined) latency = performance.now() - endSentAt;
    if (event.event === 'error') log(`  session error: ${event.code}`);
  });
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('close', () => reject(new Error('closed before it opened')));
  }).catch(() => undefined);
  if (ws.readyState !== WebSocket.OPEN) return undefined;
  ws.send(JSON.stringify({ event: 'speech_start' }));
  const started = performance.now();
  for (let at = 0, n = 0; at < audio.length; at += CHUNK_BYTES, n++) {
    ws.send(audio.subarray(at, at + CHUNK_BYTES));
    const due = started + (n + 1) * 100;
    await sleep(Math.max(0, due - performance.now()));
  }
  endSentAt = performance.now();
  ws.send(JSON.stringify({ event: 'speech_end' }));
  ws.send(JSON.stringify({ event: 'end' }));
  await Promise.race([closed, sleep(15_000)]);
  ws.terminate();
  return latency;
}

async function measure(
  engine: string,
  env: Record<string, string>,
  ownLatency: number | undefined,
): Promise<EngineResult> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `stt-stream-bench-${engine}-`));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_PORT: '0',
    ROLES: 'api,gateway',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const platform = await startPlatform(config, { logger: createLogger(config) });
  const audio = await utteranceAudio();
  const utteranceMs = (audio.length / 8000) * 1000;
  const keys: string[] = [];
  const steps: Step[] = [];
  let own = ownLatency;
  let best = 0;
  try {
    for (let n = 1; n <= MAX_SESSIONS; n *= 2) {
      while (keys.length * SESSIONS_PER_WORKSPACE < n) {
        const ws = await provisionWorkspace(platform.store, {
          name: `bench ${keys.length}`,
          mode: 'sandbox',
          balancePaise: 10_000_000,
        });
        keys.push(ws.api_key);
      }
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          session(
            platform.gatewayUrl!,
            keys[Math.floor(i / SESSIONS_PER_WORKSPACE)]!,
            audio,
            (i / n) * utteranceMs,
          ),
        ),
      );
      const latencies = results.filter((r): r is number => r !== undefined);
      const step: Step = {
        sessions: n,
        p50_ms: Math.round(percentile(latencies, 50)),
        p95_ms: Math.round(percentile(latencies, 95)),
        finals: latencies.length,
        missing: n - latencies.length,
      };
      steps.push(step);
      own ??= step.p50_ms;
      log(
        `${engine}: ${n} sessions: final after speech_end p50 ${step.p50_ms} ms, p95 ${step.p95_ms} ms, ${step.missing} without a final`,
      );
      if (step.missing > 0 || step.p95_ms > own + BUDGET_MS) break;
      best = n;
    }
  } finally {
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { sessions: best, sessions_per_core: best, own_latency_ms: own ?? 0, steps };
}

async function main(): Promise<void> {
  const cores = 1;
  log(`live speech to text, one gateway process; p95 budget: the engine's own latency + ${BUDGET_MS} ms`);
  let local: EngineResult | null = null;
  if (SphinxTranscriber.available()) local = await measure('local', { STT_PROVIDER: 'sphinx' }, undefined);
  else log('local: PocketSphinx is not installed; skipped');
  const fake = await FakeDeepgramServer.start({ transcripts: [PHRASE], latencyMs: FAKE_LATENCY_MS });
  let deepgram: EngineResult;
  try {
    deepgram = await measure(
      'deepgram_fake',
      { STT_PROVIDER: 'deepgram', STT_BASE_URL: fake.baseUrl },
      FAKE_LATENCY_MS,
    );
  } finally {
    await fake.close();
  }
  const summary = {
    cores,
    fake_latency_ms: FAKE_LATENCY_MS,
    budget_ms: BUDGET_MS,
    local,
    deepgram_fake: deepgram,
  };
  if (args.json) console.log(JSON.stringify(summary));
  else console.log(JSON.stringify(summary, null, 2));
}

await main();
process.exit(0);
