/**
 * Tools in the multi-process deployment (PostgreSQL + Redis; 1 api, 2 gateways, 1 worker as separate processes):
 * a sandbox call whose agent has a pre_call, an on_call and a post_call tool completes; the pre_call tool ran
 * in the worker, the model (a fake Chat Completions server on loopback) chose the on_call tool on a gateway, the
 * post_call delivery came signed after settlement, and all three show on the call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeCertificates, type TestCertificates } from '../../core/events/testing/receiver.ts';
import { ToolServer } from '../../core/tools/testing/tool-server.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { FakeOpenAiServer } from '../../engines/llm/testing/fake-openai-server.ts';
import { client } from '../support/platform.ts';
import { postgresUrl, redisUrl } from '../support/services.ts';
import { startTopology, type Topology } from '../support/topology.ts';

const [pg, redis] = await Promise.all([postgresUrl(), redisUrl()]);

describe('tools at all three phases, multi-process (postgres+redis)', {
  skip: !(pg && redis) && 'needs DATABASE_URL and REDIS_URL',
}, () => {
  let certs: TestCertificates;
  let server: ToolServer;
  let topology: Topology;
  let llm: FakeOpenAiServer;

  before(async () => {
    certs = makeCertificates();
    server = await ToolServer.start(certs);
    // The model looks the order up on the callee's first words, answers from the result and hangs up.
    llm = await FakeOpenAiServer.start({
      reply: (body) => {
        const messages = body.messages ?? [];
        if (messages.some((m) => m.role === 'tool'))
          return { text: 'It has shipped. Goodbye.', toolCalls: [{ name: 'end_call', arguments: '{}' }] };
        return { toolCalls: [{ name: 'lookup', arguments: '{"id":"A17"}' }] };
      },
    });
    topology = await startTopology(
      { databaseUrl: pg as string, redisUrl: redis as string },
      {
        ALLOW_PRIVATE_WEBHOOKS: '1',
        WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
        SANDBOX_RING_MS: '1500',
        NODE_EXTRA_CA_CERTS: certs.caFile,
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: llm.baseURL,
        LLM_API_KEY: 'test',
        LLM_MODEL: 'fake-model',
      },
    );
  });
  after(async () => {
    await topology?.close();
    await llm?.close();
    await server?.close();
    certs?.cleanup();
  });

  test('a sandbox call with pre_call, on_call and post_call tools completes', async () => {
    const workspace = await provisionWorkspace(topology.store, {
      name: 'Tools',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    const api = client(topology.url, workspace.api_key);
    assert.equal(
      (await api('POST', '/v2/secrets', { body: { name: 'crm_key', value: 'k_live_123' } })).status,
      201,
    );
    server.on('/pre', () => ({ json: { variables: { name: 'Meera' } } }));
    server.on('/lookup', () => ({ json: { status: 'shipped' } }));
    server.on('/post', () => ({ json: { ok: true } }));
    const request = (path: string) => ({
      url: server.url(path),
      headers: { Authorization: 'Bearer {{ secrets.crm_key }}' },
    });
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'All phases',
        first_message: 'Hello {{name}}.',
        voice: { voice_id: 'local-en-female' },
        behavior: { silence_reprompt_secs: 0 },
        tools: [
          { name: 'prepare', phase: 'pre_call', request: request('/pre') },
          {
            name: 'lookup',
            phase: 'on_call',
            description: 'Order status',
            parameters: { type: 'object', properties: { id: { type: 'string' } } },
            request: { ...request('/lookup'), body: { id: '{{ args.id }}' } },
          },
          { name: 'report', phase: 'post_call', request: request('/post') },
        ],
      },
    });
    assert.equal(agent.status, 201, agent.text);
    const placed = await api<{ id: string }>('POST', '/v2/calls', {
      // A callee that converses: its first words get the lookup.
      body: { to: '+919876543219', agent_id: agent.body.id },
    });
    assert.equal(placed.status, 202, placed.text);
    const id = placed.body.id;
    type Call = { status: string; tool_calls: Array<{ name: string; phase: string; status: string }> };
    let call: Call | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      call = (await api<Call>('GET', `/v2/calls/${id}`)).body;
      if (call.tool_calls.some((t) => t.phase === 'post_call')) break;
      await sleep(250);
    }
    assert.equal(call?.status, 'completed', JSON.stringify(call));
    assert.deepEqual(
      call?.tool_calls.map((t) => [t.name, t.phase, t.status]),
      [
        ['prepare', 'pre_call', 'succeeded'],
        ['lookup', 'on_call', 'succeeded'],
        ['report', 'post_call', 'succeeded'],
      ],
    );
    assert.equal(server.requestsTo('/pre')[0]?.headers.authorization, 'Bearer k_live_123');
    assert.deepEqual(JSON.parse(server.requestsTo('/lookup')[0]?.body ?? '{}'), { id: 'A17' });
    const post = server.requestsTo('/post')[0];
    assert.ok(post?.headers['x-service-signature']);
    assert.equal((JSON.parse(post.body) as { data: { call: { id: string } } }).data.call.id, id);
  });
});
