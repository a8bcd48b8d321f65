/**
 * on_call tools in a live conversation, with real speech: the OpenAI-compatible provider against a fake model
 * server on loopback chooses a tool; the tool's request reaches a customer's API (a local HTTPS server) through
 * the platform's tool runner; while the API is slow the agent says a filler line, then the model answers from
 * the result. A barge-in during the run: the caller is heard at once, the run goes on, and its result is in the
 * model's context when it answers the caller's new words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import type { ToolDefinition } from '../core/agents/types.ts';
import { makeCertificates, type TestCertificates } from '../core/events/testing/receiver.ts';
import { callTools } from '../core/tools/on-call.ts';
import { ToolRunner } from '../core/tools/runner.ts';
import { ToolServer } from '../core/tools/testing/tool-server.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import {
  type ChatBody,
  FakeOpenAiServer,
  type FakeReply,
} from '../engines/llm/testing/fake-openai-server.ts';
import type { LanguageModel } from '../engines/llm/types.ts';
import { speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

const ASK = 'Where is my order A17?';
const ANSWER = 'Your order A17 ships on Friday.';
const FILLER = 'One moment, please.';

function orderTool(url: string, fillerAfterMs: number): ToolDefinition {
  return {
    name: 'order_status',
    phase: 'on_call',
    description: 'Looks up where an order is',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', pattern: '^A[0-9]+$' } },
      required: ['order_id'],
    },
    request: { method: 'POST', url, headers: {}, body: { order: '{{ args.order_id }}' } },
    timeout_ms: 5_000,
    filler_after_ms: fillerAfterMs,
  };
}

/** Calls the tool on the caller's question; answers from the tool's result; otherwise acknowledges. */
function orderModel(body: ChatBody): FakeReply {
  const last = body.messages?.at(-1);
  if (last?.role === 'tool') {
    const result = JSON.parse(String(last.content)) as { ok: boolean; result?: { eta?: string } };
    return { text: result.ok ? `Your order A17 ships on ${result.result?.eta}.` : 'I could not look it up.' };
  }
  if (last?.role === 'user' && /order/i.test(String(last.content))) {
    return { toolCalls: [{ name: 'order_status', arguments: '{"order_id":"A17"}' }] };
  }
  const tool = body.messages?.find((m) => m.role === 'tool');
  if (tool) {
    const result = JSON.parse(String(tool.content)) as { result?: { eta?: string } };
    return { text: `Sure. As I found, it ships on ${result.result?.eta}.` };
  }
  return { text: 'Okay.' };
}

describe('on_call tools in a conversation', () => {
  let engines: LocalEngines;
  let certs: TestCertificates;
  let api: ToolServer;
  let runner: ToolRunner;
  let llm: FakeOpenAiServer;

  before(async () => {
    engines = await localEngines();
    certs = makeCertificates();
    api = await ToolServer.start(certs);
    runner = new ToolRunner({
      secrets: { reveal: async () => ({}) },
      allowPrivate: true,
      extraCa: certs.caPem,
    });
    llm = await FakeOpenAiServer.start({ reply: orderModel });
  });
  after(async () => {
    await llm?.close();
    await runner?.close();
    await api?.close();
    certs?.cleanup();
    await engines?.close();
  });

  function startCall(toolDelayMs: number, fillerAfterMs: number, model?: LanguageModel) {
    api.requests.length = 0;
    llm.reset({ reply: orderModel });
    api.on('/orders', () => ({ json: { eta: 'Friday' }, delayMs: toolDelayMs }));
    const call = new CallHarness({
      agent: testAgent({
        tools: [{ ...orderTool(api.url('/orders'), fillerAfterMs) }],
      }),
      stt: engines.sttServer,
      voicemail: false,
      engines: {
        llm: model ?? new OpenAiChatModel({ baseURL: llm.baseURL, apiKey: 'test', model: 'fake-model' }),
        stt: engines.stt,
        vad: engines.vad,
        speaker: engines.tts,
      },
      tools: callTools(runner, {
        workspaceId: 'ws',
        callId: 'call_1',
        agentId: 'agt_1',
        to: '',
        variables: {},
      }),
    }).start();
    return call;
  }

  test('a slow tool: the filler line, then the answer from its result', async () => {
    const call = startCall(1_500, 300);
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, ASK), ASK);
    const answered = () => call.all('agent_turn').some((e) => e.event.text.includes(ANSWER));
    assert.ok(await call.until(answered, ENGINE_WAIT_MS), call.log());
    call.session.stopped();
    await call.session.finished;

    assert.deepEqual(
      api.requestsTo('/orders').map((r) => JSON.parse(r.body)),
      [{ order: 'A17' }],
    );
    const [offered] = llm.requests.map((r) => (r.body?.tools ?? []).map((t) => t.function.name));
    assert.deepEqual(offered, ['end_call', 'order_status']);
    // One agent turn: the filler while the tool ran, then the model's answer.
    const reply = call.all('agent_turn').find((e) => e.event.text.includes(ANSWER));
    assert.equal(reply?.event.text, `${FILLER} ${ANSWER}`);
    const runs = call.all('tool_call').map((e) => e.event.outcome);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.status, 'succeeded');
    assert.equal(runs[0]?.httpStatus, 200);
    assert.ok((runs[0]?.durationMs ?? 0) >= 1_400, JSON.stringify(runs));
    // The model read the result as the tool's message, right after its call.
    const second = llm.requests[1]?.body?.messages ?? [];
    assert.equal(second.at(-2)?.tool_calls?.length, 1);
    assert.deepEqual(JSON.parse(String(second.at(-1)?.content)), {
      ok: true,
      status: 200,
      result: { eta: 'Friday' },
    });
  });

  test('a barge-in during the run: the caller is heard, and the result reaches the next answer', async () => {
    const call = startCall(3_000, 200);
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, ASK), ASK);
    // The filler is playing while the tool runs: the caller talks over it.
    const fillerPlaying = () => (call.carrier.turns.get('t2')?.samples ?? 0) >= 400 * 16;
    assert.ok(await call.until(fillerPlaying, ENGINE_WAIT_MS), call.log());
    assert.equal(call.all('tool_call').length, 0, 'the tool is still running');
    const more = 'Also please tell me the delivery time for that parcel.';
    await call.say(await speech(engines.tts, more), more);
    const heard = () => call.all('caller_turn').some((e) => e.event.text === more);
    assert.ok(await call.until(heard, ENGINE_WAIT_MS), call.log());
    assert.ok(
      call.first('interruption', (e) => e.event.type === 'interrupted'),
      call.log(),
    );
    const answered = () => call.all('agent_turn').some((e) => e.event.text.includes('it ships on Friday'));
    assert.ok(await call.until(answered, ENGINE_WAIT_MS), call.log());
    call.session.stopped();
    await call.session.finished;

    assert.equal(api.requestsTo('/orders').length, 1, 'the run was neither cut nor repeated');
    assert.deepEqual(
      call.all('tool_call').map((e) => e.event.outcome.status),
      ['succeeded'],
    );
    // The request that answers the caller's new words holds the tool's result, not a pending one.
    const next = llm.requests.find((r) => r.body?.messages?.at(-1)?.content === more)?.body?.messages ?? [];
    const result = next.find((m) => m.role === 'tool');
    assert.deepEqual(JSON.parse(String(result?.content)), {
      ok: true,
      status: 200,
      result: { eta: 'Friday' },
    });
    assert.ok(
      next.findIndex((m) => m.role === 'tool') < next.findIndex((m) => m.content === more),
      'the result sits right after the call, before the caller’s words',
    );
  });

  test('the scripted dialog engine is offered no tool, even one whose description fits the words', async () => {
    const call = startCall(0, 300, new ScriptedDialogModel());
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    await call.say(await speech(engines.tts, ASK), ASK);
    assert.ok(await call.until(() => call.spoke('t2'), ENGINE_WAIT_MS), call.log());
    call.session.stopped();
    await call.session.finished;
    assert.equal(api.requestsTo('/orders').length, 0);
    assert.equal(call.all('tool_call').length, 0);
    assert.match(call.all('agent_turn')[1]?.event.text ?? '', /^Okay\./);
  });
});
