/**
 * on_call tools on real calls, black box: the whole platform in one process (api, gateway, worker) with the
 * OpenAI-compatible language model pointed at a fake Chat Completions server on loopback that chooses tools,
 * and the customer's API a local HTTPS server; the caller is a WebSocket client on a web call, speaking when the
 * test says. The model first sends arguments that break the tool's schema (the tool is not called; the model
 * reads why), then valid ones to a slow tool (the agent says a filler, then answers from the result), then
 * calls a tool that times out (the model reads the timeout). Every run is on `GET /v2/calls/{id}` as
 * `tool_calls` and a `tool.call` live event, on the API's event stream and on the browser's socket. The tool's
 * secret reaches the API and no log line or database page.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { WebCaller } from '../../bench/conversation/web-caller.ts';
import { makeCertificates, type TestCertificates } from '../../core/events/testing/receiver.ts';
import { SQLITE_FILE_NAME } from '../../core/store/index.ts';
import { ToolServer } from '../../core/tools/testing/tool-server.ts';
import {
  type ChatBody,
  FakeOpenAiServer,
  type FakeReply,
} from '../../engines/llm/testing/fake-openai-server.ts';
import { createTextToSpeech } from '../../engines/tts/index.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const SECRET_VALUE = 'crm_live_9c2e71d04b5a';
const FILLER = 'One moment, please.';
const ANSWER = 'Your order ships on Friday.';
const NO_ANSWER = 'Sorry, the delivery system is not answering.';

interface ToolCallEntry {
  name: string;
  phase: string;
  started_at: string;
  duration_ms: number;
  status: string;
  http_status: number | null;
}
interface CallBody {
  id: string;
  status: string;
  tool_calls: ToolCallEntry[];
}

type Message = NonNullable<ChatBody['messages']>[number];
const calledNames = (messages: Message[]) =>
  messages.flatMap((m) =>
    ((m.tool_calls ?? []) as Array<{ function: { name: string } }>).map((c) => c.function.name),
  );

/**
 * A model that reads its request: on the caller's words it looks the order up (first with an order id of the
 * wrong type), then asks for a delivery slot, then says goodbye; on a tool's result it answers from it.
 */
function toolModel(body: ChatBody): FakeReply {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const result = JSON.parse(String(last.content)) as {
      ok: boolean;
      error?: string;
      timed_out?: boolean;
      result?: { eta?: string };
    };
    if (!result.ok && result.error?.startsWith('invalid arguments'))
      return { toolCalls: [{ name: 'order_status', arguments: '{"order_id":"A17"}' }] };
    if (result.ok) return { text: `Your order ships on ${result.result?.eta}.` };
    return { text: result.timed_out ? NO_ANSWER : 'Sorry, something went wrong.' };
  }
  if (last?.role === 'user') {
    const called = calledNames(messages);
    if (!called.includes('order_status'))
      return { toolCalls: [{ name: 'order_status', arguments: '{"order_id":17}' }] };
    const offered = (body.tools ?? []).map((t) => t.function.name);
    if (offered.includes('delivery_slot') && !called.includes('delivery_slot'))
      return { toolCalls: [{ name: 'delivery_slot', arguments: '{}' }] };
    return { text: 'Thank you for calling. Goodbye.' };
  }
  return { text: 'Okay.' };
}

const [embedded] = await backends();

describe('on_call tools on calls', () => {
  let certs: TestCertificates;
  let server: ToolServer;
  let llm: FakeOpenAiServer;
  let p: TestPlatform;
  let api: ReturnType<typeof client>;
  const orderStatus = () => ({
    name: 'order_status',
    phase: 'on_call',
    description: 'Looks up an order: where it is and when it arrives',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', pattern: '^A[0-9]+$' } },
      required: ['order_id'],
    },
    request: {
      method: 'POST',
      url: server.url('/orders'),
      headers: { Authorization: 'Bearer {{ secrets.crm_key }}' },
      body: { order: '{{ args.order_id }}', call: '{{ call.id }}' },
    },
    timeout_ms: 3_000,
    filler_after_ms: 300,
  });

  let question: Int16Array;
  const logs: string[] = [];

  before(async () => {
    const voices = createTextToSpeech({ espeak: true });
    const words: Int16Array[] = [];
    for await (const chunk of voices.synthesize({
      voiceId: 'local-en-male',
      text: 'Where is my order?',
      language: 'en-IN',
    }))
      words.push(chunk);
    await voices.close();
    question = concat(words);
    certs = makeCertificates();
    server = await ToolServer.start(certs);
    llm = await FakeOpenAiServer.start({ reply: toolModel });
    p = await startTestPlatform(embedded!, {
      env: {
        ROLES: 'api,gateway,worker',
        ALLOW_PRIVATE_WEBHOOKS: '1',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: llm.baseURL,
        LLM_API_KEY: 'test',
        LLM_MODEL: 'fake-model',
        LOG_LEVEL: 'debug',
      },
      webhookCa: certs.caPem,
      logger: pino(
        { level: 'debug' },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      ),
    });
    api = client(p.url, p.apiKey);
    const secret = await api('POST', '/v2/secrets', { body: { name: 'crm_key', value: SECRET_VALUE } });
    assert.equal(secret.status, 201, secret.text);
    server.on('/orders', (request) =>
      request.headers.authorization === `Bearer ${SECRET_VALUE}`
        ? { json: { eta: 'Friday' }, delayMs: 900 }
        : { status: 401 },
    );
    server.on('/slots', () => ({ json: { slot: 'morning' }, delayMs: 2_000 }));
  });

  after(async () => {
    await p?.close();
    await llm?.close();
    await server?.close();
    certs?.cleanup();
  });

  const createAgent = async (tools: unknown[]) => {
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha from Acme. Use the tools to answer questions about orders.',
        // No opening: the caller speaks first, so no agent audio is in the way.
        first_message: '',
        voice: { voice_id: 'local-en-female' },
        behavior: { silence_reprompt_secs: 0 },
        max_duration_secs: 120,
        tools,
      },
    });
    assert.equal(agent.status, 201, agent.text);
    return agent.body.id;
  };

  test('the model chooses tools: arguments checked, a filler while a tool is slow, a timeout handled; each run on the call and in its live events', async () => {
    const agentId = await createAgent([
      orderStatus(),
      {
        name: 'delivery_slot',
        phase: 'on_call',
        description: 'Finds a delivery slot',
        request: { method: 'GET', url: server.url('/slots') },
        timeout_ms: 300,
      },
    ]);
    server.requests.length = 0;
    llm.reset({ reply: toolModel });
    const created = await api<{ id: string; web: { url: string } }>('POST', '/v2/calls', {
      body: { channel: 'web', agent_id: agentId },
    });
    assert.equal(created.status, 202, created.text);
    const id = created.body.id;
    const stream = await fetch(`${p.url}/v2/calls/${id}/events`, {
      headers: { authorization: `Bearer ${p.apiKey}` },
    });
    assert.equal(stream.status, 200);
    const events: Array<Record<string, unknown>> = [];
    const followed = follow(stream, events);
    const agentSaid = (text: string) => () =>
      events.some((e) => e.type === 'agent.turn' && String(e.text).includes(text));

    const caller = await WebCaller.join(created.body.web.url, 15_000);
    try {
      await caller.say(question);
      await until(caller, agentSaid(ANSWER), () => JSON.stringify(events));
      await caller.listen(500);
      await caller.say(question);
      await until(caller, agentSaid(NO_ANSWER), () => JSON.stringify(events));
      await until(
        caller,
        () => events.filter((e) => e.type === 'tool.call').length >= 3,
        () => '',
      );
    } finally {
      await caller.hangUp();
    }
    await followed;
    assert.equal(events.at(-1)?.type, 'call.status');
    const call = (await api<CallBody>('GET', `/v2/calls/${id}`)).body;

    // Every run, in order: refused arguments (no request), the slow lookup, the slot that timed out.
    assert.deepEqual(
      call.tool_calls.map((t) => [t.name, t.phase, t.status, t.http_status]),
      [
        ['order_status', 'on_call', 'failed', null],
        ['order_status', 'on_call', 'succeeded', 200],
        ['delivery_slot', 'on_call', 'timeout', null],
      ],
    );
    const [, lookup, slot] = call.tool_calls;
    assert.ok((lookup?.duration_ms ?? 0) >= 850, JSON.stringify(lookup));
    assert.ok((slot?.duration_ms ?? 0) >= 280 && (slot?.duration_ms ?? 0) < 1_500, JSON.stringify(slot));
    assert.deepEqual(
      server.requestsTo('/orders').map((r) => JSON.parse(r.body)),
      [{ order: 'A17', call: id }],
      'only the valid arguments reached the API, with the secret',
    );
    // The live events carry the entries of tool_calls, to the API client and to the browser alike.
    const runs = events.filter((e) => e.type === 'tool.call');
    assert.deepEqual(
      runs.map(({ type: _, ...entry }) => entry),
      call.tool_calls,
    );
    assert.deepEqual(
      caller.record.events.filter((e) => e.type === 'tool.call').map((e) => e.detail),
      runs,
    );

    // What the model read: the tools as functions, the refusal, the result, the timeout.
    const first = llm.requests.find((r) => (r.body?.tools ?? []).length > 0)?.body;
    const order = first?.tools?.find((t) => t.function.name === 'order_status');
    assert.equal(order?.function.description, 'Looks up an order: where it is and when it arrives');
    assert.deepEqual(order?.function.parameters, orderStatus().parameters);
    const toolResults = llm.requests
      .map((r) => r.body?.messages?.at(-1))
      .filter((m) => m?.role === 'tool')
      .map((m) => JSON.parse(String(m?.content)) as Record<string, unknown>);
    assert.equal(toolResults.length, 3, JSON.stringify(toolResults));
    assert.equal(toolResults[0]?.ok, false);
    assert.match(String(toolResults[0]?.error), /^invalid arguments: \/order_id must be string/);
    assert.deepEqual(toolResults[1], { ok: true, status: 200, result: { eta: 'Friday' } });
    assert.deepEqual(toolResults[2], { ok: false, error: 'no answer within 300 ms', timed_out: true });

    // The caller heard the filler while the lookup ran, then the answer; no filler for the quick timeout.
    const agentLines = events.filter((e) => e.type === 'agent.turn').map((e) => e.text);
    assert.ok(agentLines.includes(`${FILLER} ${ANSWER}`), JSON.stringify(agentLines));
    assert.ok(agentLines.includes(NO_ANSWER), JSON.stringify(agentLines));

    // The secret reached the API; no log line and no database page holds it.
    assert.equal(server.requestsTo('/orders')[0]?.headers.authorization, `Bearer ${SECRET_VALUE}`);
    assert.ok(
      logs.some((l) => l.includes('on_call tool run')),
      'the runs were logged',
    );
    assert.equal(logs.join('').includes(SECRET_VALUE), false, 'a log line holds the secret');
    for (const file of [SQLITE_FILE_NAME, `${SQLITE_FILE_NAME}-wal`]) {
      const bytes = (() => {
        try {
          return readFileSync(path.join(p.dataDir, file));
        } catch {
          return Buffer.alloc(0);
        }
      })();
      assert.equal(bytes.includes(SECRET_VALUE), false, `${file} holds the secret`);
    }
  });
});

async function until(caller: WebCaller, check: () => boolean, detail: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out: ${detail()}`);
    await caller.listen(100);
  }
}

function concat(chunks: Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Reads a Server-Sent Events response into `events` until it ends. */
async function follow(response: Response, events: Array<Record<string, unknown>>): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const data = buffered
        .slice(0, end)
        .split('\n')
        .find((line) => line.startsWith('data: '));
      buffered = buffered.slice(end + 2);
      if (data) events.push(JSON.parse(data.slice(6)) as Record<string, unknown>);
      end = buffered.indexOf('\n\n');
    }
  }
}
