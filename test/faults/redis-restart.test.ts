/**
 * Faults the platform survives: a Redis restart that loses every key (`--save "" --appendonly no`, as the
 * project's docker-compose.yml runs it) in the middle of live calls. The deployment is the scaled-out one (api,
 * two gateways, worker on PostgreSQL) on a redis-server of this suite's own, which it stops and starts again on
 * the same port; the shared Redis is never touched. Healthy calls must talk on and complete, the workspace's
 * live-call ceiling must hold afterwards, and nothing may stay held.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LiveCallSlots } from '../../core/calls/live-slots.ts';
import { RedisCoordinator } from '../../core/coord/redis.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { client, errorCode } from '../support/platform.ts';
import { RedisServer, redisServerAvailable } from '../support/redis-server.ts';
import { postgresUrl, uniqueName } from '../support/services.ts';
import { startTopology, type Topology } from '../support/topology.ts';

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
}

const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);
const databaseUrl = await postgresUrl();

describe('a Redis restart that loses its state, mid-call (separate processes, postgres)', {
  skip:
    (!databaseUrl && 'DATABASE_URL is not set') ||
    (!redisServerAvailable() && 'redis-server is not installed'),
}, () => {
  let redis: RedisServer;
  let topology: Topology;
  let api: ReturnType<typeof client>;
  let agentId: string;
  let workspaceId: string;
  let noSpeechToText: string;
  const prefix = uniqueName('faults');

  before(async () => {
    redis = await RedisServer.start();
    noSpeechToText = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-nostt-'));
    topology = await startTopology(
      { databaseUrl: databaseUrl as string, redisUrl: redis.url },
      {
        SANDBOX_RING_MS: '1500',
        LIVE_CALL_LEASE_MS: '3000',
        REDIS_PREFIX: prefix,
        // Calls take turns by voice activity alone: what is under test is the coordinator, and five
        // conversations' speech recognition at once would only slow the suite down on a small machine.
        PATH: noSpeechToText,
        SPHINX_MODEL_DIR: noSpeechToText,
      },
    );
    const workspace = await provisionWorkspace(topology.store, {
      name: 'Faults',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    workspaceId = workspace.workspace_id;
    api = client(topology.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        // The scripted engine answers each caller turn with "Okay." and this prompt's first sentence: a short
        // one keeps every conversation (three turns each way, all still spoken) a few seconds shorter.
        system_prompt: 'You are Asha.',
        first_message: 'Hello {{name}}, this is Asha from Acme.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 120,
        end_call: { enabled: true, message: 'Goodbye!' },
      },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
  });

  after(async () => {
    await topology?.close();
    await redis?.stop();
    if (noSpeechToText) rmSync(noSpeechToText, { recursive: true, force: true });
  });

  async function place(to: string): Promise<CallBody> {
    const response = await api<CallBody>('POST', '/v2/calls', {
      body: { to, agent_id: agentId, variables: { name: 'Ravi' } },
    });
    assert.equal(response.status, 202, response.text);
    return response.body;
  }

  async function until(
    id: string,
    done: (call: CallBody) => boolean,
    timeoutMs = 120_000,
  ): Promise<CallBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
      if (done(body)) return body;
      if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}: ${JSON.stringify(body)}`);
      await sleep(200);
    }
  }

  test('five live calls talk through the restart and complete; two new calls after it complete too', async () => {
    const live = await Promise.all(['6', '7', '8', '9', '6'].map((digit) => place(`+91987654322${digit}`)));
    await Promise.all(live.map((call) => until(call.id, (c) => c.status === 'in_progress')));

    await redis.restart();
    const later = await Promise.all([place('+919876543237'), place('+919876543238')]);

    const ended = await Promise.all(
      [...live, ...later].map((call) => until(call.id, (c) => TERMINAL.has(c.status))),
    );
    assert.deepEqual(
      ended.map((call) => [call.id, call.status]),
      [...live, ...later].map((call) => [call.id, 'completed']),
      JSON.stringify(ended),
    );

    const wallet = await api<{ held_inr: number }>('GET', '/v2/wallet');
    assert.equal(wallet.body.held_inr, 0);
    const coord = new RedisCoordinator({ url: redis.url, keyPrefix: prefix });
    try {
      assert.deepEqual([...(await new LiveCallSlots(coord).holders(workspaceId))], []);
    } finally {
      await coord.close();
    }
  });

  test('while Redis is down live calls talk on, the API answers and queues new calls, which go once it is back without passing the ceiling', async () => {
    const live = await Promise.all(['6', '7', '8', '9'].map((digit) => place(`+91987654324${digit}`)));
    await Promise.all(live.map((call) => until(call.id, (c) => c.status === 'in_progress')));

    await redis.down();
    // Reads come from the database; new calls are admitted and wait queued; an abort of a queued call answers.
    const read = await api<CallBody>('GET', `/v2/calls/${live[0]?.id}`);
    assert.equal(read.status, 200, read.text);
    const queued = [];
    for (const digit of ['6', '7', '8']) queued.push(await place(`+91987654325${digit}`));
    const doomed = await place('+919876543259');
    const aborted = await api<CallBody>('POST', `/v2/calls/${doomed.id}/abort`);
    assert.equal(aborted.status, 200, aborted.text);
    assert.equal(aborted.body.status, 'aborted');
    // What needs Redis answers 503 in the envelope: a web call's live event stream, say.
    const web = await api<CallBody>('POST', '/v2/calls', { body: { channel: 'web', agent_id: agentId } });
    assert.equal(web.status, 202, web.text);
    const stream = await api(`GET`, `/v2/calls/${web.body.id}/events`);
    assert.equal(stream.status, 503, stream.text);
    assert.equal(errorCode(stream), 'service_unavailable');
    assert.equal((await api('POST', `/v2/calls/${web.body.id}/abort`)).status, 200);
    const health = await fetch(`${topology.url}/healthz`);
    assert.equal(health.status, 503, 'health says the coordinator is down');
    await sleep(3_000);
    for (const call of live) {
      const { body } = await api<CallBody>('GET', `/v2/calls/${call.id}`);
      assert.equal(body.status, 'in_progress', `${call.id} talks on while Redis is down`);
    }
    for (const call of queued) {
      const { body } = await api<CallBody>('GET', `/v2/calls/${call.id}`);
      assert.equal(body.status, 'queued', 'no call is dialled without its slot');
    }
    await redis.up();

    // The ceiling (5) holds once Redis is back: never more live calls than slots, counted from the database.
    let most = 0;
    const watching = (async () => {
      for (;;) {
        const calls = await Promise.all(
          [...live, ...queued].map(async (call) => (await topology.store.calls.findById(call.id))?.status),
        );
        most = Math.max(most, calls.filter((s) => s === 'dialing' || s === 'in_progress').length);
        if (calls.every((s) => s !== undefined && TERMINAL.has(s))) return;
        await sleep(100);
      }
    })();
    const ended = await Promise.all(
      [...live, ...queued].map((call) => until(call.id, (c) => TERMINAL.has(c.status))),
    );
    await watching;
    assert.deepEqual(
      ended.map((call) => call.status),
      ended.map(() => 'completed'),
      JSON.stringify(ended),
    );
    assert.ok(most <= 5, `at most 5 live at once, saw ${most}`);
    const wallet = await api<{ held_inr: number }>('GET', '/v2/wallet');
    assert.equal(wallet.body.held_inr, 0);
  });
});
