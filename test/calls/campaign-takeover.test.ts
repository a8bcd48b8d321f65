/**
 * A campaign's dialler leader killed mid-campaign, black box: the platform as separate processes (api, two
 * gateways, two workers) on PostgreSQL and Redis. The worker leading the campaign is killed without warning while
 * its calls are out; the standby takes the campaign over, every contact reaches a final state, and none is
 * called twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { client } from '../support/platform.ts';
import { postgresUrl, redisUrl } from '../support/services.ts';
import { startTopology, type Topology } from '../support/topology.ts';

const [databaseUrl, redis] = await Promise.all([postgresUrl(), redisUrl()]);

describe('campaign leader killed mid-campaign (separate processes, postgres+redis)', {
  skip: !(databaseUrl && redis) && 'PostgreSQL and Redis are not configured',
}, () => {
  let topology: Topology;

  before(async () => {
    topology = await startTopology(
      { databaseUrl: databaseUrl as string, redisUrl: redis as string },
      {
        LOG_LEVEL: 'info',
        SANDBOX_ANSWER_DELAY_MS: '20',
        SANDBOX_RING_MS: '200',
        CAMPAIGN_POLL_MS: '100',
        CAMPAIGN_LEADER_LOCK_MS: '1500',
        LIVE_CALL_LEASE_MS: '3000',
      },
      { secondWorker: true },
    );
  });

  after(async () => {
    await topology?.close();
  });

  test('the standby takes over: every contact final, none called twice', async () => {
    const ws = await provisionWorkspace(topology.store, {
      name: 'Takeover',
      mode: 'sandbox',
      balancePaise: 1_000_000,
    });
    const api = client(topology.url, ws.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha from Acme.',
        first_message: 'Hello.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 60,
        behavior: { silence_reprompt_secs: 0 },
      },
    });
    // Numbers ending in 4 answer and hang up after 2 s (calls out while the leader dies); 0 is busy.
    const numbers = Array.from(
      { length: 30 },
      (_, i) => `+91987650${String(i).padStart(3, '0')}${i % 2 ? 4 : 0}`,
    );
    const created = await api<{ id: string }>('POST', '/v2/campaigns', {
      body: {
        name: 'Takeover',
        agent_id: agent.body.id,
        timezone: 'Asia/Kolkata',
        slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }],
        retry_count: 0,
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    await api('POST', `/v2/campaigns/${id}/contacts`, { body: { contacts: numbers.map((to) => ({ to })) } });
    const started = await api('POST', `/v2/campaigns/${id}/start`);
    assert.equal(started.status, 200, started.text);

    const leads = (name: string) =>
      topology.nodes.find((n) => n.name === name)?.output.some((line) => line.includes(id)) ?? false;
    const deadline = Date.now() + 60_000;
    let leader: string | undefined;
    for (;;) {
      const campaign = (await api<{ progress: { calls_placed: number } }>('GET', `/v2/campaigns/${id}`)).body;
      leader = ['worker', 'worker-b'].find(leads);
      if (leader && campaign.progress.calls_placed >= 6) break;
      assert.ok(Date.now() < deadline, 'the campaign got going');
      await sleep(50);
    }
    await topology.kill(leader);
    const standby = leader === 'worker' ? 'worker-b' : 'worker';

    type Progress = { status: string; progress: { contacts: Record<string, number>; calls_placed: number } };
    let campaign: Progress;
    for (;;) {
      campaign = (await api<Progress>('GET', `/v2/campaigns/${id}`)).body;
      if (campaign.status === 'completed') break;
      assert.ok(Date.now() < deadline + 60_000, `completed: ${JSON.stringify(campaign)}`);
      await sleep(100);
    }
    assert.ok(leads(standby), 'the standby led the campaign after the take-over');
    assert.equal(campaign.progress.contacts.total, 30);
    assert.equal(campaign.progress.contacts.pending, 0);
    assert.equal(campaign.progress.contacts.calling, 0);
    assert.equal(campaign.progress.calls_placed, 30, 'one call per contact');
    const contacts = await api<{ data: Array<{ to: string; call_ids: string[] }> }>(
      'GET',
      `/v2/campaigns/${id}/contacts?limit=100`,
    );
    assert.deepEqual(
      contacts.body.data.map((c) => c.call_ids.length),
      numbers.map(() => 1),
      'no contact called twice, none lost',
    );
    const calls = await api<{ data: Array<{ to: string }> }>('GET', `/v2/calls?campaign_id=${id}&limit=100`);
    assert.equal(new Set(calls.body.data.map((c) => c.to)).size, 30);
  });
});
