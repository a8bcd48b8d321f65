/**
 * Per-turn knowledge retrieval on a real call placed through v1: the whole platform in one process (api,
 * gateway, worker), the sandbox carrier's conversing callee ("Yes, speaking." / "I wanted to ask about my
 * order." / "Okay, thank you. Goodbye."), heard by a fake Deepgram server on loopback that gives each utterance
 * its line of the script (so what the caller said is known exactly), and the OpenAI-compatible model pointed at
 * a fake Chat Completions server on loopback that keeps every request. The assistant's documents are far over the prompt's budget: the
 * prompt does not hold them, and the model's request for the caller's question carries the passage that answers
 * it, the request for a turn that matches nothing carries none.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { KNOWLEDGE_PER_TURN_NOTE } from '../../core/v1/mapping.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { FakeOpenAiServer } from '../../engines/llm/testing/fake-openai-server.ts';
import { FakeDeepgramServer } from '../../engines/stt/testing/fake-deepgram-server.ts';
import { TURN_KNOWLEDGE_HEADING } from '../../pipeline/reply.ts';
import { client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { V1_HOST, v1Client } from './support.ts';

const TRACKING =
  'Tracking: every order can be followed at shop.example/track with its order number, updated hourly.';
/** Passages that share no word with anything the callee says. */
const FILLER = Array.from(
  { length: 150 },
  (_, i) =>
    `Packing note ${i}: fragile glassware is wrapped twice in bubble film before it leaves the warehouse.`,
);

describe('knowledge retrieved per caller turn on a v1 call (sqlite+memory)', () => {
  let llm: FakeOpenAiServer;
  let stt: FakeDeepgramServer;
  let documents: http.Server;
  let base: string;
  let p: TestPlatform;

  before(async () => {
    llm = await FakeOpenAiServer.start({ reply: { text: 'Okay.' } });
    stt = await FakeDeepgramServer.start({
      transcripts: ['Yes, speaking.', 'I wanted to ask about my order.', 'Okay, thank you. Goodbye.'],
    });
    documents = http.createServer((req, res) => {
      if (req.url !== '/help.txt') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end([...FILLER, TRACKING].join('\n'));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
    p = await startTestPlatform(
      { name: 'sqlite+memory' },
      {
        env: {
          ROLES: 'api,gateway,worker',
          V1_HOST,
          ALLOW_PRIVATE_WEBHOOKS: '1',
          LLM_PROVIDER: 'openai',
          LLM_BASE_URL: llm.baseURL,
          LLM_API_KEY: 'test',
          LLM_MODEL: 'fake-model',
          STT_PROVIDER: 'deepgram',
          STT_BASE_URL: stt.baseUrl,
          STT_API_KEY: 'test',
        },
      },
    );
  });

  after(async () => {
    await p?.close();
    await llm?.close();
    await stt?.close();
    await new Promise<void>((resolve) => documents?.close(() => resolve()));
  });

  test("the model's request for the caller's question carries the passage that answers it", async () => {
    const workspace = await provisionWorkspace(p.platform.store, {
      name: 'Shop',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    const v1 = v1Client(p.url, workspace.v1);
    const v2 = client(p.url, workspace.api_key);
    const upload = await v1('POST', '/v1/admin/knowledge-base/upload', {
      body: { url: `${base}/help.txt`, title: 'Help', type: 'txt' },
    });
    assert.equal(upload.status, 201, upload.text);
    const created = await v1<{ data: { _id: string } }>('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'Support',
        variant: { type: 'order_confirmation' },
        agent: { firstMessage: 'Hello, this is Asha from the shop.' },
        callSettings: { maxCallDuration: 60 },
        knowledgeBase: { documents: [{ url: `${base}/help.txt`, title: 'Help', type: 'txt' }] },
      },
    });
    assert.equal(created.status, 201, created.text);
    const assistant = created.body.data._id;
    const agent = await v2<{ system_prompt: string }>('GET', `/v2/agents/${assistant}`);
    assert.ok(!agent.body.system_prompt.includes('Tracking:'), 'the documents are over the prompt budget');

    const initiated = await v1<{ callId: string }>('POST', '/v2/call/initiate', {
      body: { phoneNumber: '+919876543217', assistant },
    });
    assert.equal(initiated.status, 200, initiated.text);
    // Once the model was asked about the order, the call has shown what it has to: it is aborted.
    const asked = () =>
      llm.requests.some((r) => /\border\b/i.test(String(r.body?.messages?.at(-1)?.content ?? '')));
    const deadline = Date.now() + 45_000;
    while (!asked() && Date.now() < deadline) await sleep(100);
    const aborted = await v1('POST', '/v2/call/abort', { body: { callId: initiated.body.callId } });
    assert.equal(aborted.status, 200, aborted.text);

    const turns = llm.requests
      .map((r) => r.body?.messages ?? [])
      .filter((messages) => messages.at(-1)?.role === 'user')
      .map((messages) => ({
        system: String(messages[0]?.content),
        heard: messages
          .filter((m) => m.role === 'user')
          .map((m) => String(m.content))
          .join(' '),
        said: String(messages.at(-1)?.content),
      }));
    const heard = JSON.stringify(turns.map((t) => t.said));
    const question = turns.find((t) => /\border\b/i.test(t.said));
    assert.ok(question, `the question was heard: ${heard}`);
    assert.ok(question.system.includes(KNOWLEDGE_PER_TURN_NOTE), 'the prompt comes first');
    assert.equal(question.system.split(TURN_KNOWLEDGE_HEADING).length, 2, 'after the prompt, once');
    assert.ok(
      question.system.endsWith(`${TURN_KNOWLEDGE_HEADING}\n[Help] ${TRACKING}`),
      question.system.slice(-400),
    );
    const before = turns.filter((t) => !/\border\b/i.test(t.heard));
    assert.ok(before.length > 0, `a turn before the question: ${heard}`);
    for (const turn of before)
      assert.ok(!turn.system.includes(TURN_KNOWLEDGE_HEADING), 'a turn that matches nothing gets nothing');
  });
});
