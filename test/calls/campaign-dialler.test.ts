/**
 * Campaigns dialling, black box: the whole platform in one process (api, gateway and worker roles) on a clock
 * the test moves, campaigns started over real HTTP, their calls placed through the sandbox carrier (callees
 * behave by the number's last digit) and followed through the API, the wallet and the campaign's signed events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Campaign = {
  id: string;
  status: string;
  pause_reason: string | null;
  next_window_at: string | null;
  spent_paise: number;
  held_paise: number;
  progress: { contacts: Record<string, number>; calls_placed: number };
};
interface Contact {
  to: string;
  status: string;
  attempts: number;
  call_ids: string[];
}
interface Call {
  id: string;
  status: string;
  tier: string;
  created_at: string;
  campaign_id?: string;
  cost: { amount_inr: number; per_min_inr: number };
}

/** The test's clock: real time moved by `shift`, so calls still run in real time between the jumps. */
let shift = 0;
const clock = { now: () => Date.now() + shift };
const setClock = (at: string) => {
  shift = Date.parse(at) - Date.now();
};
/** Into Monday's slot, unless the clock is there already (it never goes back). */
const mondayMorning = () => {
  if (clock.now() < Date.parse(MON_0900)) setClock(MON_0900);
};

// Friday 4 December 2026 in India (UTC+05:30): a slot from Friday 22:00 to 02:00 crosses midnight into a
// Saturday with no slot of its own; the next one is Monday morning.
const SLOTS = [
  { days: ['fri'], start: '22:00', end: '02:00' },
  { days: ['mon'], start: '09:00', end: '10:00' },
];
const FRI_2159 = '2026-12-04T16:29:00.000Z';
const SAT_0005 = '2026-12-04T18:35:00.000Z';
const SAT_0200 = '2026-12-04T20:30:30.000Z';
const MON_0900 = '2026-12-07T03:30:00.000Z';
const MON_1000 = '2026-12-07T04:30:30.000Z';
const NEXT_FRI_2201 = '2026-12-11T16:31:00.000Z';

const backend = (await backends())[0];
assert.ok(backend);

describe('campaigns dial (one process, sqlite+memory)', () => {
  let p: TestPlatform;
  let certs: TestCertificates;
  let receiver: WebhookReceiver;
  const secrets: string[] = [];

  before(async () => {
    certs = makeCertificates();
    receiver = await WebhookReceiver.start({ certs, secrets: () => secrets, nowMs: clock.now });
    p = await startTestPlatform(backend, {
      env: {
        ROLES: 'api,gateway,worker',
        ALLOW_PRIVATE_WEBHOOKS: '1',
        WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800',
        SANDBOX_ANSWER_DELAY_MS: '20',
        SANDBOX_RING_MS: '200',
        CAMPAIGN_POLL_MS: '50',
      },
      clock,
      webhookCa: certs.caPem,
    });
  });

  after(async () => {
    await p?.close();
    await receiver?.close();
  });

  async function workspace(balancePaise: number) {
    const ws = await provisionWorkspace(p.platform.store, {
      name: 'Outreach',
      mode: 'sandbox',
      balancePaise,
    });
    secrets.push(ws.webhook_secret);
    const api = client(p.url, ws.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha from Acme, calling {{name}} about their order.',
        first_message: 'Hello {{name}}.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 60,
        behavior: { silence_reprompt_secs: 0 },
      },
    });
    assert.equal(agent.status, 201, agent.text);
    return { id: ws.workspace_id, api, agentId: agent.body.id };
  }

  async function campaignUntil(
    api: ReturnType<typeof client>,
    id: string,
    done: (c: Campaign) => boolean,
    what: string,
  ): Promise<Campaign> {
    const until = Date.now() + 60_000;
    for (;;) {
      const campaign = (await api<Campaign>('GET', `/v2/campaigns/${id}`)).body;
      if (done(campaign)) return campaign;
      if (Date.now() > until) assert.fail(`${what}: ${JSON.stringify(campaign)}`);
      await sleep(50);
    }
  }

  async function all<T>(api: ReturnType<typeof client>, path: string): Promise<T[]> {
    const items: T[] = [];
    let after: string | undefined;
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const page = await api<{ data: T[]; has_more: boolean; next_cursor?: string }>(
        'GET',
        `${path}${sep}limit=100${after ? `&starting_after=${after}` : ''}`,
      );
      assert.equal(page.status, 200, page.text);
      items.push(...page.body.data);
      if (!page.body.has_more) return items;
      after = (page.body.data.at(-1) as { id: string }).id;
    }
  }

  /**
   * Starts a campaign. The gateway's presence lease runs on the test's clock, so right after a jump the fleet
   * may look empty for up to a second (503 fleet_offline), until the gateway renews it: retried, as a client would.
   */
  async function startCampaign(api: ReturnType<typeof client>, id: string) {
    const until = Date.now() + 5_000;
    for (;;) {
      const started = await api<Campaign>('POST', `/v2/campaigns/${id}/start`);
      if (errorCode(started) !== 'fleet_offline' || Date.now() > until) return started;
      await sleep(100);
    }
  }

  function eventsOf(campaignId: string): string[] {
    return [...receiver.processed.values()]
      .map((raw) => JSON.parse(raw.toString()) as { type: string; data: { campaign?: { id: string } } })
      .filter((e) => e.data.campaign?.id === campaignId)
      .map((e) => e.type);
  }

  test('200 contacts: only inside the slots (past midnight, over a weekend), retries after the period, do-not-call, T5, completed', async () => {
    setClock(FRI_2159);
    const { api } = await workspace(1_000_000);
    // By the last digit: 0 busy, 5 carrier failure, 1 never answers, 4 answers and hangs up (connected).
    const digits = [
      '0',
      '5',
      '1',
      '0',
      '5',
      '4',
      '0',
      '1',
      '0',
      '5',
      '0',
      '1',
      '5',
      '0',
      '4',
      '5',
      '0',
      '1',
      '0',
      '4',
    ];
    const numbers = Array.from({ length: 200 }, (_, i) =>
      `+9198765${String(i).padStart(4, '0')}${digits[i % 20]}`.slice(0, 13),
    );
    const created = await api<Campaign>('POST', '/v2/campaigns', {
      body: {
        name: 'Weekend',
        agent_id: (await api<{ data: Array<{ id: string }> }>('GET', '/v2/agents')).body.data[0]?.id,
        timezone: 'Asia/Kolkata',
        slots: SLOTS,
        tier: 't1',
        retry_count: 1,
        re_attempt_period_secs: 300,
        webhook_url: receiver.url(),
        variables: { name: 'there' },
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const upload = await api('POST', `/v2/campaigns/${id}/contacts`, {
      body: { contacts: numbers.map((to) => ({ to })) },
    });
    assert.equal(upload.status, 200, upload.text);
    assert.equal((await api('POST', '/v2/dnc', { body: { numbers: [numbers[0]] } })).status, 200);

    const started = await startCampaign(api, id);
    assert.equal(started.status, 200, started.text);
    assert.equal(started.body.status, 'play');
    assert.equal(started.body.next_window_at, '2026-12-04T16:30:00.000Z', 'Friday 22:00 in India');
    await sleep(400);
    assert.equal((await api<Campaign>('GET', `/v2/campaigns/${id}`)).body.progress.calls_placed, 0);

    // Saturday 00:05: inside Friday's slot, which runs past midnight.
    setClock(SAT_0005);
    const lastNumber = numbers[199] as string;
    assert.equal((await api('POST', '/v2/dnc', { body: { numbers: [lastNumber] } })).status, 200);
    const firstRound = await campaignUntil(
      api,
      id,
      (c) => c.progress.calls_placed === 198 && c.progress.contacts.calling === 0,
      'first round',
    );
    assert.equal(firstRound.progress.contacts.suppressed, 2);
    assert.equal(firstRound.status, 'play');

    // Saturday 02:00:30: the slot closed; the retries are due but wait for Monday.
    setClock(SAT_0200);
    const closed = (await api<Campaign>('GET', `/v2/campaigns/${id}`)).body;
    assert.equal(closed.next_window_at, '2026-12-07T03:30:00.000Z', 'Monday 09:00 in India');
    await sleep(500);
    assert.equal((await api<Campaign>('GET', `/v2/campaigns/${id}`)).body.progress.calls_placed, 198);

    setClock(MON_0900);
    const done = await campaignUntil(api, id, (c) => c.status === 'completed', 'completed');
    const connected = numbers.filter((n, i) => n.endsWith('4') && i !== 199).length;
    assert.deepEqual(done.progress.contacts, {
      pending: 0,
      calling: 0,
      completed: connected,
      suppressed: 2,
      exhausted: 198 - connected,
      failed: 0,
      total: 200,
    });
    assert.equal(done.progress.calls_placed, connected + 2 * (198 - connected));
    assert.equal(done.held_paise, 0);

    const contacts = await all<Contact>(api, `/v2/campaigns/${id}/contacts`);
    const suppressed = contacts.filter((c) => c.status === 'suppressed');
    assert.deepEqual(suppressed.map((c) => c.to).sort(), [numbers[0], lastNumber].sort());
    assert.ok(
      suppressed.every((c) => c.call_ids.length === 0),
      'a do-not-call number is never dialled',
    );

    const calls = await all<Call>(api, `/v2/calls?campaign_id=${id}`);
    assert.equal(calls.length, done.progress.calls_placed);
    assert.ok(calls.every((c) => c.campaign_id === id && c.tier === 't5' && c.cost.per_min_inr === 5));
    const inWindow = (at: string) => at.startsWith('2026-12-04T18:') || at.startsWith('2026-12-07T03:');
    assert.deepEqual(
      calls.filter((c) => !inWindow(c.created_at)).map((c) => c.created_at),
      [],
      'every call placed inside a slot',
    );
    const retried = contacts.filter((c) => c.attempts === 2);
    assert.equal(retried.length, 198 - connected);
    const byId = new Map(calls.map((c) => [c.id, c]));
    for (const contact of retried) {
      const [first, second] = contact.call_ids.map((callId) => byId.get(callId));
      assert.ok(first?.created_at.startsWith('2026-12-04T18:'), 'first attempt on Saturday night');
      assert.ok(second?.created_at.startsWith('2026-12-07T03:'), 'the retry on Monday');
    }
    const spent = calls.reduce((sum, c) => sum + Math.round(c.cost.amount_inr * 100), 0);
    assert.equal(done.spent_paise, spent);
    assert.ok(spent > 0, 'the connected calls were billed');

    const until = Date.now() + 15_000;
    while (!eventsOf(id).includes('campaign.completed') && Date.now() < until) await sleep(50);
    assert.deepEqual(eventsOf(id), ['campaign.started', 'campaign.completed']);
  });

  test('the wallet running dry pauses it (insufficient_balance); a top-up and start resume it, no contact called twice', async () => {
    mondayMorning();
    // One call's hold (T5, 60 s) is 500 paise: after one connected call of a few seconds less than that is left.
    const ws = await workspace(510);
    const { api } = ws;
    const numbers = ['+919876500014', '+919876500024', '+919876500030', '+919876500040', '+919876500050'];
    const id = (
      await api<Campaign>('POST', '/v2/campaigns', {
        body: {
          name: 'Dry',
          agent_id: ws.agentId,
          timezone: 'Asia/Kolkata',
          slots: SLOTS,
          max_concurrent: 1,
          retry_count: 0,
          webhook_url: receiver.url(),
        },
      })
    ).body.id;
    await api('POST', `/v2/campaigns/${id}/contacts`, { body: { contacts: numbers.map((to) => ({ to })) } });
    assert.equal((await startCampaign(api, id)).status, 200);
    const paused = await campaignUntil(api, id, (c) => c.status === 'paused', 'paused');
    assert.equal(paused.pause_reason, 'insufficient_balance');
    assert.equal(paused.progress.calls_placed, 1);
    assert.equal(paused.progress.contacts.pending, 4);
    const resume = await api('POST', `/v2/campaigns/${id}/resume`);
    assert.equal(resume.status, 409, 'paused by itself: start it again');
    assert.equal(errorCode(resume), 'conflict');

    await p.platform.store.wallet.credit(ws.id, {
      amountPaise: 10_000,
      reference: 'topup_dry',
      kind: 'topup',
    });
    assert.equal((await startCampaign(api, id)).status, 200);
    const done = await campaignUntil(api, id, (c) => c.status === 'completed', 'completed');
    assert.equal(done.progress.calls_placed, 5);
    const contacts = await all<Contact>(api, `/v2/campaigns/${id}/contacts`);
    assert.deepEqual(
      contacts.map((c) => c.call_ids.length),
      [1, 1, 1, 1, 1],
      'every contact called exactly once',
    );
    const until = Date.now() + 15_000;
    while (eventsOf(id).length < 4 && Date.now() < until) await sleep(50);
    assert.deepEqual(eventsOf(id), [
      'campaign.started',
      'campaign.paused',
      'campaign.resumed',
      'campaign.completed',
    ]);
  });

  test('a budget pause, and 409 on every forbidden transition', async () => {
    mondayMorning();
    const ws = await workspace(100_000);
    const { api } = ws;
    const id = (
      await api<Campaign>('POST', '/v2/campaigns', {
        body: {
          name: 'Budget',
          agent_id: ws.agentId,
          timezone: 'Asia/Kolkata',
          slots: SLOTS,
          retry_count: 0,
          // One call's worst case (500 paise) fits; after it connected and was billed, the next does not.
          budget_paise: 510,
        },
      })
    ).body.id;
    await api('POST', `/v2/campaigns/${id}/contacts`, {
      body: { contacts: ['+919876500114', '+919876500120', '+919876500130'].map((to) => ({ to })) },
    });
    assert.equal((await startCampaign(api, id)).status, 200);
    for (const [method, path] of [
      ['POST', `/v2/campaigns/${id}/start`],
      ['POST', `/v2/campaigns/${id}/resume`],
      ['PATCH', `/v2/campaigns/${id}`],
      ['DELETE', `/v2/campaigns/${id}`],
    ] as const) {
      const refused = await api(method, path, method === 'PATCH' ? { body: { name: 'x' } } : {});
      assert.equal(refused.status, 409, `${method} ${path} while play: ${refused.text}`);
    }
    const paused = await campaignUntil(api, id, (c) => c.status === 'paused', 'paused');
    assert.equal(paused.pause_reason, 'budget_exhausted');
    assert.equal(paused.progress.calls_placed, 1);
    assert.ok(paused.spent_paise > 10, 'the connected call was billed');
    assert.equal(paused.progress.contacts.pending, 2);
    assert.equal((await api('POST', `/v2/campaigns/${id}/resume`)).status, 409, 'paused by itself');
    // Outside the calling hours (Monday 10:00:30) it plays without dialling. Paused by its owner, the
    // dialler stands by: resume works; then stop is for good.
    setClock(MON_1000);
    const raised = await api<Campaign>('PATCH', `/v2/campaigns/${id}`, { body: { budget_paise: 100_000 } });
    assert.equal(raised.status, 200, raised.text);
    assert.equal((await startCampaign(api, id)).status, 200);
    assert.equal((await api('POST', `/v2/campaigns/${id}/pause`)).status, 200);
    assert.equal((await api('POST', `/v2/campaigns/${id}/resume`)).status, 200);
    assert.equal((await api('POST', `/v2/campaigns/${id}/stop`)).status, 200);
    for (const path of ['start', 'resume', 'pause', 'stop']) {
      const refused = await api('POST', `/v2/campaigns/${id}/${path}`);
      assert.equal(refused.status, 409, `${path} after stop`);
    }
  });

  test('rings from its pool, and waits (still playing) while the pool is at its pace', async () => {
    // The next Friday night's slot: later than every clock before it.
    setClock(NEXT_FRI_2201);
    const ws = await workspace(1_000_000);
    const { api } = ws;
    assert.equal(
      (
        await api('POST', '/v2/telephony/submit', {
          body: {
            business: { name: 'Acme Retail Pvt Ltd', registration_number: 'U52100MH2020PTC123456' },
            address: { line1: '12 MG Road', city: 'Bengaluru', state: 'Karnataka', postal_code: '560001' },
            documents: [{ type: 'business_registration', url: 'https://docs.example.com/coi.pdf' }],
          },
        })
      ).status,
      201,
    );
    await api('POST', '/v2/telephony/refresh');
    const found = await api<{ data: Array<{ number: string }> }>('GET', '/v2/telephony/search?area=80');
    const number = found.body.data[0]?.number as string;
    const quote = await api<{ id: string }>('POST', '/v2/telephony/quote', { body: { number } });
    const rented = await api<{ id: string }>('POST', '/v2/telephony/rent', {
      body: { number, quote_id: quote.body.id },
    });
    assert.equal(rented.status, 201, rented.text);
    // A new number is warming: half the pool's pace, 2 calls this hour.
    const pool = await api<{ id: string }>('POST', '/v2/phone-pools', {
      body: { name: 'Outreach', purpose: 'outreach', max_per_hour: 4, number_ids: [rented.body.id] },
    });
    assert.equal(pool.status, 201, pool.text);
    const id = (
      await api<Campaign>('POST', '/v2/campaigns', {
        body: {
          name: 'Paced',
          agent_id: ws.agentId,
          pool_id: pool.body.id,
          timezone: 'Asia/Kolkata',
          slots: SLOTS,
          retry_count: 0,
        },
      })
    ).body.id;
    await api('POST', `/v2/campaigns/${id}/contacts`, {
      body: { contacts: ['+919876500210', '+919876500220', '+919876500230'].map((to) => ({ to })) },
    });
    assert.equal((await startCampaign(api, id)).status, 200);
    await campaignUntil(
      api,
      id,
      (c) => c.progress.calls_placed === 2 && c.progress.contacts.calling === 0,
      'two calls at the pace',
    );
    await sleep(500);
    const waiting = (await api<Campaign>('GET', `/v2/campaigns/${id}`)).body;
    assert.equal(waiting.status, 'play', 'a pool at its pace makes the campaign wait, not fail');
    assert.equal(waiting.progress.calls_placed, 2);
    assert.equal(waiting.progress.contacts.pending, 1);
    const calls = await all<Call & { from: string; pool_id?: string }>(api, `/v2/calls?campaign_id=${id}`);
    assert.ok(calls.every((c) => c.from === number && c.pool_id === pool.body.id));
    assert.equal((await api('POST', `/v2/campaigns/${id}/stop`)).status, 200);
  });
});
