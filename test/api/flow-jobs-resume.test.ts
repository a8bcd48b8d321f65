/**
 * A worker killed mid-job (SIGKILL, no goodbye): its claim lapses, another worker resumes the job where its
 * state was last written, and the job is charged once, for what answered before the kill too. PostgreSQL and
 * Redis when the run has them (where claims race for real), else one SQLite file shared by the processes.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as wait } from 'node:timers/promises';
import { type RunningPlatform, startPlatform } from '../../cli/serve.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { type ChatBody, FakeOpenAiServer } from '../../engines/llm/testing/fake-openai-server.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { uniqueName } from '../support/services.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/voiceagent.js');

type Job = {
  id: string;
  status: string;
  stage: string;
  tokens: { total: number };
  progress: { tests_done: number };
  cost: { amount_inr: number; transaction_id: string | null };
  rounds_finished: unknown[];
};

const FLOW = {
  nodes: [
    { id: 'start', type: 'startCall', data: { greeting: 'Hello, Spice Garden.', prompt: 'Help them book.' } },
    { id: 'bye', type: 'endCall', data: { prompt: 'Thank them.' } },
  ],
  edges: [
    { id: 'e1', source: 'start', target: 'bye', data: { label: 'booked', condition: 'a table is booked' } },
  ],
};

let fake: FakeOpenAiServer;
let p: TestPlatform;
let child: ChildProcess | undefined;
let rescuer: RunningPlatform | undefined;
const prefix = uniqueName('t');

function reply(body: ChatBody) {
  const system = body.messages?.[0]?.content ?? '';
  const usage = { promptTokens: 100, completionTokens: 10 };
  if (body.model === 'live-model') {
    const functions = (body.tools ?? []).map((t) => t.function.name);
    const last = body.messages?.[body.messages.length - 1];
    if (last?.role === 'tool' || functions.length === 0) return { usage, text: 'Done.' };
    return { usage, text: 'Booked.', toolCalls: [{ name: 'end_call', arguments: '{}' }] };
  }
  if (system.startsWith('[flow-test:caller]')) {
    // Slow callers: the job is mid-simulation for a while.
    const said = (body.messages ?? []).filter((m) => m.role === 'assistant').length;
    return { usage, firstTokenLatencyMs: 250, text: said === 0 ? 'A table for two, please.' : '[HANGUP]' };
  }
  if (system.startsWith('[flow-test:scenarios]')) {
    return {
      usage,
      text: JSON.stringify({
        callers: [1, 2, 3].map((i) => ({ name: `C${i}`, goal: 'book', persona: 'calm' })),
      }),
    };
  }
  return { usage, text: JSON.stringify({ summary: 'Fine.', findings: [] }) };
}

before(async () => {
  fake = await FakeOpenAiServer.start({ reply });
});

after(async () => {
  child?.kill('SIGKILL');
  await rescuer?.close();
  await p?.close();
  await fake?.close();
});

test('a worker killed mid-job: another resumes it, and it is charged once for everything that answered', {
  timeout: 120_000,
}, async () => {
  const backend = (await backends()).at(-1) ?? { name: 'sqlite+memory' };
  const models = {
    LLM_PROVIDER: 'openai',
    LLM_BASE_URL: fake.baseURL,
    LLM_MODEL: 'live-model',
    FLOW_FLASH_MODEL: 'flash-model',
    FLOW_FLASH_USD_PER_M: '1,2',
    FLOW_JOB_POLL_MS: '50',
    FLOW_JOB_LEASE_MS: '1500',
    ...(backend.redisUrl ? { REDIS_PREFIX: prefix } : {}),
  };
  p = await startTestPlatform(backend, { env: { ROLES: 'api', ...models } });
  const shared = {
    ...models,
    DATA_DIR: p.dataDir,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    GATEWAY_PORT: '0',
    ...(backend.databaseUrl
      ? { DATABASE_URL: backend.databaseUrl, DATABASE_SCHEMA: p.databaseSchema ?? '' }
      : {}),
    ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl } : {}),
  };
  child = spawn(process.execPath, [BIN, 'serve', '--roles', 'worker'], {
    env: { ...process.env, ...shared, NODE_ID: 'doomed' },
    stdio: 'ignore',
  });

  const api = client(p.url, p.apiKey);
  const started = await api<Job>('POST', '/v2/agents/flow/refine', { body: { flow: FLOW, simulate: 3 } });
  assert.equal(started.status, 202, started.text);
  const id = started.body.id;
  const read = async () => (await api<Job>('GET', `/v2/agents/flow/refine/${id}`)).body;

  let beforeKill: Job | undefined;
  for (let i = 0; i < 3_000; i++) {
    const job = await read();
    if (job.stage === 'simulating' && job.progress.tests_done >= 1) {
      beforeKill = job;
      break;
    }
    await wait(10);
  }
  assert.ok(beforeKill, 'the doomed worker got mid-simulation');
  child.kill('SIGKILL');
  await new Promise((resolve) => child?.once('exit', resolve));
  const atKill = await read();
  assert.equal(atKill.status, 'running');

  rescuer = await startPlatform(loadConfig({ ...shared, ROLES: 'worker', NODE_ID: 'rescuer' }), {
    logger: createLogger({ logLevel: 'silent' }),
  });
  let job = await read();
  for (let i = 0; job.status === 'running' && i < 3_000; i++) {
    await wait(10);
    job = await read();
  }
  assert.equal(job.status, 'succeeded');
  assert.ok(job.tokens.total >= atKill.tokens.total, 'what answered before the kill is still counted');
  assert.ok(job.tokens.total > atKill.tokens.total, 'the rescuer did the rest');
  const ledger = await api<{
    data: Array<{ kind: string; reference: string; amount_paise: number; id: string }>;
  }>('GET', '/v2/wallet/transactions');
  const entries = ledger.body.data.filter((e) => e.kind === 'flow_generation');
  assert.equal(entries.length, 1, 'charged once');
  assert.equal(entries[0]?.reference, id);
  assert.equal(entries[0]?.amount_paise, -Math.round(job.cost.amount_inr * 100));
});
