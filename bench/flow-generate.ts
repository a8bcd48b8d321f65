/**
 * How long `POST /v2/agents/flow/generate` takes on a model of realistic speed (README "Flow tests"): does a
 * draft fit inside the API's 30 s answer budget, or does the request answer 202 and the client poll?
 *
 *   npm run bench:flow-generate -- [--nodes 10] [--json]
 *
 * The platform's api and worker roles (SQLite, in-process) against a fake Chat Completions server that streams a
 * realistic draft (a flow of `--nodes` steps with prompts of about 60 words each) at the pace of two model
 * profiles: a fast one (first token 0.7 s, ~150 tokens/s) and a slow one (first token 2 s, ~50 tokens/s). The
 * fake streams a word a chunk, and a word is about 1.3 tokens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startPlatform } from '../cli/serve.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { FakeOpenAiServer } from '../engines/llm/testing/fake-openai-server.ts';

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '10' }, json: { type: 'boolean', default: false } },
});
const NODES = Number(values.nodes);
const TOKENS_PER_WORD = 1.3;

function draft(nodes: number): string {
  const prompt = (i: number) =>
    `Step ${i}: ask the caller politely for the detail this step needs, confirm it back in one short sentence, answer a question about opening hours, prices or parking from the facts you were given, and when the caller has given it move on; if the caller is unsure, offer two choices and wait; never promise what the business does not offer, and keep every reply under two sentences.`;
  const steps = Array.from({ length: nodes }, (_, i) => ({
    id: `s${i}`,
    type: i === 0 ? 'startCall' : 'agentNode',
    data: {
      name: `Step ${i}`,
      prompt: prompt(i),
      ...(i === 0 ? { greeting: 'Hello {{name}}, Spice Garden here.' } : {}),
    },
  }));
  const flow = {
    nodes: [
      { id: 'g', type: 'globalNode', data: { prompt: 'You are Asha of Spice Garden, warm and brief.' } },
      ...steps,
      { id: 'bye', type: 'endCall', data: { prompt: 'Thank the caller and say goodbye.' } },
    ],
    edges: [
      ...steps.slice(1).map((s, i) => ({
        id: `e${i}`,
        source: `s${i}`,
        target: s.id,
        data: { label: `step_${i}_done`, condition: `The caller gave what step ${i} asks for` },
      })),
      {
        id: 'end',
        source: `s${nodes - 1}`,
        target: 'bye',
        data: { label: 'all_done', condition: 'Everything is collected' },
      },
    ],
  };
  return JSON.stringify({ flow }, null, 1);
}

const PROFILES = [
  { name: 'fast (0.7 s, ~150 tok/s)', firstTokenLatencyMs: 700, tokensPerSecond: 150 },
  { name: 'slow (2 s, ~50 tok/s)', firstTokenLatencyMs: 2_000, tokensPerSecond: 50 },
];

const text = draft(NODES);
const words = text.match(/\s*\S+/g)?.length ?? 0;
const results: Array<{
  profile: string;
  status: number;
  answeredMs: number;
  readyMs: number;
  tokens: number;
}> = [];
for (const profile of PROFILES) {
  const fake = await FakeOpenAiServer.start({
    reply: { text, usage: { promptTokens: 1_200, completionTokens: Math.round(words * TOKENS_PER_WORD) } },
    firstTokenLatencyMs: profile.firstTokenLatencyMs,
    tokensPerSecond: profile.tokensPerSecond / TOKENS_PER_WORD,
  });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-bench-'));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    ROLES: 'api,worker',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    FLOW_FLASH_MODEL: 'bench-model',
    FLOW_FLASH_BASE_URL: fake.baseURL,
  });
  const platform = await startPlatform(config, { logger: createLogger(config) });
  try {
    const started = performance.now();
    const headers = {
      authorization: `Bearer ${platform.bootstrapped?.apiKey}`,
      'content-type': 'application/json',
    };
    const res = await fetch(`${platform.apiUrl}/v2/agents/flow/generate`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        brief: 'Spice Garden takes table bookings by phone.',
        variables: { name: 'Ravi' },
      }),
    });
    const answeredMs = Math.round(performance.now() - started);
    type Draft = { id: string; status: string; tokens?: { output: number } };
    let body = (await res.json()) as Draft;
    while (body.status === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const read = await fetch(`${platform.apiUrl}/v2/agents/flow/generate/${body.id}`, { headers });
      body = (await read.json()) as Draft;
    }
    results.push({
      profile: profile.name,
      status: res.status,
      answeredMs,
      readyMs: Math.round(performance.now() - started),
      tokens: body.tokens?.output ?? 0,
    });
  } finally {
    await platform.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (values.json) console.log(JSON.stringify({ nodes: NODES, results }));
else {
  console.log(`flow draft of ${NODES} steps (~${Math.round(words * TOKENS_PER_WORD)} output tokens)`);
  for (const r of results) {
    console.log(
      `  ${r.profile}: answered ${r.status} in ${r.answeredMs} ms; draft ready in ${r.readyMs} ms (${r.tokens} tokens)`,
    );
  }
}
