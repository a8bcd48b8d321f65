/**
 * Tools on real calls, black box: the whole platform in one process (api, gateway and worker) places sandbox
 * calls whose agent has tools pointing at a local HTTPS server standing in for the customer's API. pre_call
 * tools add variables the agent speaks, skip calls, and fail without holding the call up; every run shows on
 * the call as `tool_calls`, and a secret's value reaches the customer's API but no log line and no database row.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { verifySignature } from '../../core/events/signing.ts';
import { makeCertificates, type TestCertificates } from '../../core/events/testing/receiver.ts';
import { SQLITE_FILE_NAME } from '../../core/store/index.ts';
import { ToolServer } from '../../core/tools/testing/tool-server.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const SECRET_VALUE = 'crm_live_4b1f0c7e9a2d58e3b6c1f0a9';
const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  cost: { amount_inr: number };
  tool_calls: Array<{
    name: string;
    phase: string;
    status: string;
    http_status: number | null;
    duration_ms: number;
  }>;
}

const [embedded] = await backends();

describe('tools on sandbox calls', () => {
  let certs: TestCertificates;
  let server: ToolServer;
  let p: TestPlatform;
  let api: ReturnType<typeof client>;
  let agentId: string;
  const logs: string[] = [];

  before(async () => {
    certs = makeCertificates();
    server = await ToolServer.start(certs);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    p = await startTestPlatform(embedded!, {
      env: {
        ROLES: 'api,gateway,worker',
        WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
        ALLOW_PRIVATE_WEBHOOKS: '1',
        SANDBOX_RING_MS: '1500',
        LOG_LEVEL: 'debug',
      },
      webhookCa: certs.caPem,
      logger: pino({ level: 'debug' }, sink),
    });
    api = client(p.url, p.apiKey);
    assert.equal(
      (await api('POST', '/v2/secrets', { body: { name: 'crm_key', value: SECRET_VALUE } })).status,
      201,
    );
    server.on('/crm', (request) => {
      if (request.headers.authorization !== `Bearer ${SECRET_VALUE}`) return { status: 401 };
      const sent = JSON.parse(request.body) as { mode: string; to: string };
      if (sent.mode === 'skip') return { json: { skip: true, reason: 'customer paid already' } };
      if (sent.mode === 'fail') return { status: 500, json: { error: 'down' } };
      if (sent.mode === 'slow') return { delayMs: 4_000, json: { variables: { name: 'Late' } } };
      return { json: { variables: { name: 'Meera', order: 4471 } } };
    });
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        first_message: 'Hello {{name}}, this is Asha.',
        voice: { voice_id: 'local-en-female' },
        behavior: { silence_reprompt_secs: 0 },
        tools: [
          {
            name: 'crm_lookup',
            phase: 'pre_call',
            request: {
              method: 'POST',
              url: `${server.url('/crm')}?call={{ call.id }}`,
              headers: { Authorization: 'Bearer {{ secrets.crm_key }}' },
              body: { to: '{{ call.to }}', mode: '{{ variables.mode }}' },
            },
            timeout_ms: 2_000,
          },
          {
            // The scripted dialog engine cannot choose it: each call logs that once.
            name: 'order_status',
            phase: 'on_call',
            description: 'Looks an order up',
            request: { method: 'GET', url: server.url('/orders') },
          },
        ],
      },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
  });

  after(async () => {
    await p?.close();
    await server?.close();
    certs?.cleanup();
  });

  const place = async (to: string, mode: string) => {
    const r = await api<CallBody>('POST', '/v2/calls', {
      body: { to, agent_id: agentId, variables: { name: 'Ravi', mode } },
    });
    assert.equal(r.status, 202, r.text);
    return r.body.id;
  };
  const ended = async (id: string): Promise<CallBody> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
      if (TERMINAL.has(body.status)) return body;
      if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}`);
      await sleep(200);
    }
  };
  const agentLines = async (id: string) => {
    const r = await api<{ turns: Array<{ speaker: string; text: string }> }>(
      'GET',
      `/v2/calls/${id}/transcript`,
    );
    return r.status === 200 ? r.body.turns.filter((t) => t.speaker === 'agent').map((t) => t.text) : [];
  };
  const variablesOf = async (id: string) => (await p.platform.store.calls.get(p.workspaceId, id))?.variables;

  test('a pre_call tool adds variables that the agent then speaks; the run shows as tool_calls', async () => {
    const id = await place('+919876543219', 'ok');
    const call = await ended(id);
    assert.equal(call.status, 'completed', JSON.stringify(call));
    assert.deepEqual(await variablesOf(id), { name: 'Meera', mode: 'ok', order: 4471 });
    // The session reads the call's variables when media starts: the opening (when the callee let it be heard)
    // greets the name the tool returned, never the one the call was placed with.
    const lines = await agentLines(id);
    assert.ok(!lines.some((l) => l.includes('Ravi')), JSON.stringify(lines));
    assert.equal(call.tool_calls.length, 1);
    const [run] = call.tool_calls;
    assert.equal(run?.name, 'crm_lookup');
    assert.equal(run?.phase, 'pre_call');
    assert.equal(run?.status, 'succeeded');
    assert.equal(run?.http_status, 200);
    const sent = server.requestsTo('/crm').find((r) => r.path.includes(id));
    assert.ok(sent, 'the tool was called with the call id in its URL');
    assert.deepEqual(JSON.parse(sent.body), { to: '+919876543219', mode: 'ok' });
    const notices = logs.filter(
      (l) => l.includes(id) && l.includes('the scripted dialog engine cannot choose tools'),
    );
    assert.equal(notices.length, 1, 'the on_call tool not offered is logged once for the call');
    assert.equal(server.requestsTo('/orders').length, 0);
  });

  test('a pre_call skip ends the call failed, skipped-by-pre-call, unbilled, with one terminal event', async () => {
    const id = await place('+919876543214', 'skip');
    const call = await ended(id);
    assert.equal(
      call.status,
      'failed',
      JSON.stringify(call) + logs.filter((l) => l.includes('pre_call') || l.includes('dialer')).join('\n'),
    );
    assert.equal(call.ended_reason, 'skipped-by-pre-call');
    assert.equal(call.cost.amount_inr, 0);
    assert.deepEqual(
      call.tool_calls.map((t) => t.status),
      ['succeeded'],
    );
    const events = await p.platform.store.events.listForCall(p.workspaceId, id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['call.failed'],
    );
    const wallet = await api<{ held_paise: number }>('GET', '/v2/wallet');
    assert.equal(wallet.body.held_paise, 0);
  });

  test('a failing or slow pre_call tool does not block the call: it is dialled without the variables', async () => {
    const [failing, slow] = await Promise.all([
      place('+919876543214', 'fail'),
      place('+919876543214', 'slow'),
    ]);
    const [a, b] = await Promise.all([ended(failing), ended(slow)]);
    assert.equal(a.status, 'completed');
    assert.equal(b.status, 'completed');
    assert.deepEqual(
      a.tool_calls.map((t) => [t.status, t.http_status]),
      [['failed', 500]],
    );
    assert.deepEqual(
      b.tool_calls.map((t) => [t.status, t.http_status]),
      [['timeout', null]],
    );
    assert.deepEqual(await variablesOf(failing), { name: 'Ravi', mode: 'fail' });
    assert.deepEqual(await variablesOf(slow), { name: 'Ravi', mode: 'slow' });
  });

  test('a post_call tool receives the signed call after settlement, and is retried after a 500', async () => {
    const attempts = new Map<string, number>();
    server.on('/after', (request) => {
      const id = (JSON.parse(request.body) as { id: string }).id;
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      return attempts.get(id) === 1 ? { status: 500 } : { json: { ok: true } };
    });
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'After',
        first_message: 'Hello.',
        voice: { voice_id: 'local-en-female' },
        behavior: { silence_reprompt_secs: 0 },
        tools: [
          {
            name: 'crm_sync',
            phase: 'post_call',
            request: { url: server.url('/after'), headers: { 'X-Api-Key': '{{ secrets.crm_key }}' } },
          },
        ],
      },
    });
    assert.equal(agent.status, 201, agent.text);
    const placed = await api<CallBody>('POST', '/v2/calls', {
      body: { to: '+919876543214', agent_id: agent.body.id },
    });
    const call = await ended(placed.body.id);
    assert.equal(call.status, 'completed');
    const deadline = Date.now() + 20_000;
    while (server.requestsTo('/after').length < 2 && Date.now() < deadline) await sleep(100);
    const [first, second] = server.requestsTo('/after');
    assert.ok(first && second, 'delivered twice: a 500, then a retry');
    assert.equal(first.body, second.body, 'the retry carries the same bytes');
    assert.equal(second.headers['x-api-key'], SECRET_VALUE);
    const [webhookSecret] = await p.platform.store.secrets.webhookSecrets(p.workspaceId);
    const signature = verifySignature(
      second.headers['x-service-signature'] as string,
      second.body,
      webhookSecret?.secret ?? '',
      Math.floor(Date.now() / 1000),
    );
    assert.equal(signature.ok, true);
    const sent = JSON.parse(second.body) as {
      type: string;
      data: { tool: string; call: { id: string; status: string }; transcript: unknown; analysis: unknown };
    };
    assert.equal(sent.type, 'tool.post_call');
    assert.equal(sent.data.tool, 'crm_sync');
    assert.equal(sent.data.call.id, call.id);
    assert.equal(sent.data.call.status, 'completed');
    assert.ok(Array.isArray(sent.data.transcript));
    assert.ok('analysis' in sent.data);
    let runs: CallBody['tool_calls'] = [];
    for (let i = 0; i < 50 && runs.length < 2; i++) {
      runs = (await api<CallBody>('GET', `/v2/calls/${call.id}`)).body.tool_calls;
      if (runs.length < 2) await sleep(100);
    }
    assert.deepEqual(
      runs.map((r) => [r.name, r.phase, r.status, r.http_status]),
      [
        ['crm_sync', 'post_call', 'failed', 500],
        ['crm_sync', 'post_call', 'succeeded', 200],
      ],
    );
  });

  test('the secret value reached the API, and no log line nor the database file holds it', async () => {
    assert.ok(server.requestsTo('/crm').some((r) => r.headers.authorization === `Bearer ${SECRET_VALUE}`));
    assert.ok(logs.length > 10, 'the calls were logged');
    const joined = logs.join('');
    assert.equal(joined.includes(SECRET_VALUE), false, 'a log line holds the secret');
    const file = readFileSync(path.join(p.dataDir, SQLITE_FILE_NAME));
    const wal = (() => {
      try {
        return readFileSync(path.join(p.dataDir, `${SQLITE_FILE_NAME}-wal`));
      } catch {
        return Buffer.alloc(0);
      }
    })();
    for (const bytes of [file, wal])
      assert.equal(bytes.includes(SECRET_VALUE), false, 'the database holds the secret');
  });
});
