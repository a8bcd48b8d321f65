/**
 * What an on_call tool round trip adds to a turn, on fakes of fixed latency (README "Tools and secrets").
 *
 *   npm run bench:tools -- [--turns 50] [--tool-ms 200] [--model-ms 100] [--json]
 *
 * One agent reply at a time, as a call makes it (`generateReply`: the OpenAI-compatible provider, the dialog,
 * the call's tool runs), against real loopback servers: a fake Chat Completions server whose first chunk comes
 * after `--model-ms`, and a customer's API over HTTPS (a test CA) that answers after `--tool-ms`. The model calls
 * the tool on the caller's words and answers from its result, so a tool turn is two model requests with the
 * tool's request between them; speech is a stand-in that yields audio at once, so TTS is not in the figures.
 * A turn's time runs from asking the model to the first audio of the answer. Printed, p50/p95 over `--turns`:
 * - `added`: a tool turn less the tool's own time (its fixed latency): the second model request, the argument
 *   check, rendering and sending the request, and reading its answer;
 * - `overhead`: a tool turn less two turns without a tool (median; a tool turn asks the model twice) less the
 *   tool's own time: what the platform adds around the tool's request (checking the arguments, rendering and
 *   sending the request through the address guard, reading the answer, giving it to the model).
 * The filler line is off (`filler_after_ms: 0`), so the answer's first audio is the answer's.
 */
import { parseArgs } from 'node:util';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { ToolDefinition } from '../core/agents/types.ts';
import { DEFAULT_END_CALL } from '../core/agents/types.ts';
import { makeCertificates } from '../core/events/testing/receiver.ts';
import { callTools } from '../core/tools/on-call.ts';
import { ToolRunner } from '../core/tools/runner.ts';
import { ToolServer } from '../core/tools/testing/tool-server.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import {
  type ChatBody,
  FakeOpenAiServer,
  type FakeReply,
} from '../engines/llm/testing/fake-openai-server.ts';
import type { ChatMessage } from '../engines/llm/types.ts';
import { createDialog } from '../pipeline/dialog/index.ts';
import { generateReply, type Speaker } from '../pipeline/reply.ts';
import { ToolRuns } from '../pipeline/tool-runs.ts';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '50' },
    'tool-ms': { type: 'string', default: '200' },
    'model-ms': { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const turns = Number(values.turns);
const toolMs = Number(values['tool-ms']);
const modelMs = Number(values['model-ms']);
const ANSWER = 'Your order ships on Friday.';

/** Speech stand-in: one 20 ms chunk per clause, at once. */
const speaker: Speaker = {
  async *synthesize() {
    yield new Int16Array(320);
  },
};

function model(body: ChatBody): FakeReply {
  const last = body.messages?.at(-1);
  if (last?.role === 'tool') return { text: ANSWER };
  if ((body.tools ?? []).some((t) => t.function.name === 'order_status'))
    return { toolCalls: [{ name: 'order_status', arguments: '{"order_id":"A17"}' }] };
  return { text: ANSWER };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
const sortedOf = (xs: number[]) => [...xs].sort((a, b) => a - b);
const round = (ms: number) => Math.round(ms * 10) / 10;

async function main(): Promise<void> {
  const certs = makeCertificates();
  const api = await ToolServer.start(certs);
  const llm = await FakeOpenAiServer.start({ reply: model, firstTokenLatencyMs: modelMs, usage: false });
  const runner = new ToolRunner({
    secrets: { reveal: async () => ({}) },
    allowPrivate: true,
    extraCa: certs.caPem,
  });
  try {
    api.on('/orders', () => ({ json: { eta: 'Friday' }, delayMs: toolMs }));
    const tool: ToolDefinition = {
      name: 'order_status',
      phase: 'on_call',
      description: 'Looks up an order',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      request: {
        method: 'POST',
        url: api.url('/orders'),
        headers: {},
        body: { order: '{{ args.order_id }}' },
      },
      timeout_ms: 10_000,
      filler_after_ms: 0,
    };
    const engine = new OpenAiChatModel({ baseURL: llm.baseURL, apiKey: 'bench', model: 'fake-model' });
    const tools = callTools(runner, {
      workspaceId: 'ws',
      callId: 'call',
      agentId: 'agt',
      to: '',
      variables: {},
    });
    const agent = testAgent({
      end_call: { ...DEFAULT_END_CALL, enabled: false },
      tools: [{ ...tool }],
    });

    const turn = async (withTool: boolean): Promise<{ turnMs: number; runMs: number }> => {
      const controller = new AbortController();
      let runMs = Number.NaN;
      const runs = new ToolRuns(tools, controller.signal, (outcome) => {
        if (outcome.status !== 'succeeded')
          throw new Error(`the tool run ${outcome.status}: ${outcome.error}`);
        runMs = outcome.durationMs;
      });
      const history: ChatMessage[] = [{ role: 'user', content: 'Where is my order?' }];
      let answeredAt: number | undefined;
      const started = performance.now();
      const result = await generateReply({
        turnId: 't',
        signal: controller.signal,
        history,
        dialog: createDialog(agent, {}, withTool ? [tool] : []),
        llm: engine,
        speaker,
        voice: { voiceId: 'local-en-female', language: 'en-IN' },
        sink: {
          audio: (_turn, _pcm, text) => {
            if (text === ANSWER) answeredAt ??= performance.now();
          },
        },
        wallNow: () => performance.now(),
        ...(withTool ? { tools: runs } : {}),
      });
      if (result.failure) throw result.failure.error;
      if (answeredAt === undefined) throw new Error('the turn did not answer');
      return { turnMs: answeredAt - started, runMs };
    };

    // Warm-up: connections, the SDK's first request, the TLS session.
    for (let i = 0; i < 5; i++) {
      await turn(true);
      await turn(false);
    }
    const plain: number[] = [];
    const withTool: number[] = [];
    const runs: number[] = [];
    for (let i = 0; i < turns; i++) {
      plain.push((await turn(false)).turnMs);
      const t = await turn(true);
      withTool.push(t.turnMs);
      runs.push(t.runMs);
    }
    const plainMedian = percentile(sortedOf(plain), 50);
    const added = sortedOf(withTool.map((ms) => ms - toolMs));
    const over = sortedOf(withTool.map((ms) => ms - 2 * plainMedian - toolMs));
    const summary = {
      turns,
      tool_latency_ms: toolMs,
      model_first_token_ms: modelMs,
      plain_turn_ms: { p50: round(plainMedian), p95: round(percentile(sortedOf(plain), 95)) },
      tool_turn_ms: {
        p50: round(percentile(sortedOf(withTool), 50)),
        p95: round(percentile(sortedOf(withTool), 95)),
      },
      tool_run_ms: { p50: round(percentile(sortedOf(runs), 50)), p95: round(percentile(sortedOf(runs), 95)) },
      added_ms: { p50: round(percentile(added, 50)), p95: round(percentile(added, 95)) },
      overhead_ms: { p50: round(percentile(over, 50)), p95: round(percentile(over, 95)) },
    };
    console.log(
      `on_call tool round trip, ${turns} turns; tool ${toolMs} ms, model first token ${modelMs} ms`,
    );
    console.log(
      `  plain turn          p50 ${summary.plain_turn_ms.p50} ms  p95 ${summary.plain_turn_ms.p95} ms`,
    );
    console.log(
      `  tool turn           p50 ${summary.tool_turn_ms.p50} ms  p95 ${summary.tool_turn_ms.p95} ms`,
    );
    console.log(`  tool run (measured) p50 ${summary.tool_run_ms.p50} ms  p95 ${summary.tool_run_ms.p95} ms`);
    console.log(`  added (turn - tool) p50 ${summary.added_ms.p50} ms  p95 ${summary.added_ms.p95} ms`);
    console.log(`  overhead            p50 ${summary.overhead_ms.p50} ms  p95 ${summary.overhead_ms.p95} ms`);
    if (values.json) console.log(JSON.stringify(summary));
  } finally {
    await runner.close();
    await llm.close();
    await api.close();
    certs.cleanup();
  }
}

await main();
