/**
 * Does the `openai` SDK add latency over a plain `fetch` + SSE parser? Time to first text delta against the fake
 * server (own process, zero artificial latency), three clients interleaved in rotating order:
 *   sdk   - `client.chat.completions.create({stream: true})`
 *   fetch - `plainFetchChunks`, the same request with `fetch` and `SseDataDecoder`
 *   model - `OpenAiChatModel.chat` (the SDK plus our retry, timers and assembly)
 * Each reads its whole reply (connections are reused, as in a call); also printed: client CPU per request.
 *
 *   node --import tsx bench/llm-sdk-latency.ts [rounds=2000]
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import { chatRequestBody } from '../engines/llm/providers/openai-wire.ts';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';
import { plainFetchChunks } from '../engines/llm/testing/plain-fetch-chat.ts';
import type { ChatRequest } from '../engines/llm/types.ts';

const REPLY = 'Sure, I can help you book that appointment for tomorrow morning at ten.';
const WARMUP_ROUNDS = 300;

if (process.argv.includes('--serve')) {
  const server = await FakeOpenAiServer.start({ reply: { text: REPLY } });
  process.send?.(server.baseURL);
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
} else {
  await measure(Number(process.argv[2] ?? 2000));
}

async function measure(rounds: number): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const baseURL = await new Promise<string>((resolve) =>
    child.once('message', (url) => resolve(String(url))),
  );
  const request: ChatRequest = {
    messages: [
      { role: 'system', content: 'You book appointments for City Clinic. Be brief.' },
      { role: 'user', content: 'I want to see the doctor tomorrow morning.' },
    ],
  };
  const body = chatRequestBody('fake-model', request, 'max_tokens');
  const sdk = new OpenAI({
    baseURL,
    apiKey: 'sk-test',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: 'off',
    maxRetries: 0,
  });
  const model = new OpenAiChatModel({ baseURL, apiKey: 'sk-test', model: 'fake-model' });
  // Each client reads its whole reply (so connections are reused as in a real call) and reports when the first
  // text arrived.
  const clients: Record<string, (started: number) => Promise<number>> = {
    sdk: async (started) => {
      let first = 0;
      const stream = await sdk.chat.completions.create(body);
      for await (const chunk of stream)
        if (first === 0 && chunk.choices?.[0]?.delta?.content) first = performance.now();
      return first - started;
    },
    fetch: async (started) => {
      let first = 0;
      for await (const chunk of plainFetchChunks(baseURL, 'sk-test', body)) {
        if (first === 0 && chunk.choices?.[0]?.delta?.content) first = performance.now();
      }
      return first - started;
    },
    model: async (started) => {
      let first = 0;
      for await (const event of model.chat(request))
        if (first === 0 && event.type === 'text') first = performance.now();
      return first - started;
    },
  };
  const names = Object.keys(clients);
  const samples = new Map(names.map((name) => [name, [] as number[]]));
  const cpuMicros = new Map(names.map((name) => [name, 0]));
  for (let round = 0; round < WARMUP_ROUNDS + rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      const cpuBefore = process.cpuUsage();
      const elapsed = await clients[name]!(performance.now());
      const cpu = process.cpuUsage(cpuBefore);
      if (round < WARMUP_ROUNDS) continue;
      samples.get(name)!.push(elapsed);
      cpuMicros.set(name, cpuMicros.get(name)! + cpu.user + cpu.system);
    }
  }
  console.log(
    `time to first text delta, ${rounds} rounds each (after ${WARMUP_ROUNDS} warm-up), server in its own process`,
  );
  console.log('client   median_ms  p90_ms  p99_ms  mean_ms  client_cpu_ms_per_request');
  for (const name of names) {
    const sorted = samples.get(name)!.sort((a, b) => a - b);
    const at = (q: number): string =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
    const mean = (sorted.reduce((sum, x) => sum + x, 0) / sorted.length).toFixed(3);
    const cpu = (cpuMicros.get(name)! / 1000 / rounds).toFixed(3);
    console.log(
      `${name.padEnd(8)} ${at(0.5).padStart(9)} ${at(0.9).padStart(7)} ${at(0.99).padStart(7)} ${mean.padStart(8)}  ${cpu}`,
    );
  }
  // The server process exits when its IPC channel closes.
  child.disconnect();
}
