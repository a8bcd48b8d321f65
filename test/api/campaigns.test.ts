/**
 * Campaigns over real HTTP: create with defaults and every bound checked, read, list with filters and a cursor,
 * edit, delete; contacts from JSON and from a streamed CSV (duplicates and rejected rows reported, a failed
 * upload leaving nothing behind); transitions with 409 where forbidden and a signed `campaign.stopped` event;
 * another workspace's campaign out of sight. This platform runs no media gateway, so nothing starts (fleet_offline);
 * test/campaigns/dialler.test.ts runs campaigns.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeCertificates, WebhookReceiver } from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Api = ReturnType<typeof client>;
type Campaign = Record<string, unknown> & {
  id: string;
  status: string;
  pause_reason: string | null;
  tier: string;
  billing_tier: string;
  max_concurrent: number;
  retry_count: number;
  re_attempt_period_secs: number;
  webhook_url: string | null;
  budget_paise: number | null;
  name: string;
  progress: { contacts: Record<string, number>; calls_placed: number };
};
interface Upload {
  object: string;
  accepted: number;
  duplicates: number;
  rejected: Array<{ row: number; message: string }>;
}

const slots = [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:30', end: '18:00' }];
/** The UTC weekday `days` from today. */
const weekdayIn = (days: number) =>
  (['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const)[(new Date().getUTCDay() + days) % 7] as string;
const csv = (text: string) => ({ rawBody: text, headers: { 'content-type': 'text/csv' } });

for (const backend of await backends()) {
  describe(`campaigns (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    let agentId: string;
    let receiver: WebhookReceiver;
    const secrets: string[] = [];

    before(async () => {
      const certs = makeCertificates();
      receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
      p = await startTestPlatform(backend, {
        env: { ROLES: 'api,worker', ALLOW_PRIVATE_WEBHOOKS: '1' },
        webhookCa: certs.caPem,
      });
      const workspace = await provisionWorkspace(p.platform.store, {
        name: 'Campaigns',
        mode: 'sandbox',
        balancePaise: 100_000,
      });
      secrets.push(workspace.webhook_secret);
      api = client(p.url, workspace.api_key);
      const agent = await api<{ id: string }>('POST', '/v2/agents', {
        body: { name: 'Asha', system_prompt: 'You are Asha.', voice: { voice_id: 'local-en-female' } },
      });
      assert.equal(agent.status, 201, agent.text);
      agentId = agent.body.id;
    });
    after(async () => {
      await p?.close();
      await receiver?.close();
    });

    const create = (extra: Record<string, unknown> = {}) =>
      api<Campaign>('POST', '/v2/campaigns', {
        body: { name: 'Renewals', agent_id: agentId, timezone: 'Asia/Kolkata', slots, ...extra },
      });

    test('create with defaults, read back, and every bound refused in the envelope', async () => {
      const created = await create({ tier: 't1' });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.id, /^cmp_[0-9A-Z]{26}$/);
      assert.equal(created.body.status, 'paused');
      assert.equal(created.body.pause_reason, 'not_started');
      assert.deepEqual(
        [created.body.max_concurrent, created.body.retry_count, created.body.re_attempt_period_secs],
        [5, 2, 3600],
      );
      assert.equal(created.body.tier, 't1');
      assert.equal(created.body.billing_tier, 't5', 'a sandbox workspace bills campaigns at T5');
      assert.equal(created.body.progress.contacts.total, 0);
      const read = await api<Campaign>('GET', `/v2/campaigns/${created.body.id}`);
      assert.deepEqual(read.body, created.body);

      const always = await create({
        slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }],
      });
      assert.equal(always.body.next_window_at, null, 'open now: no next window');
      const nextWeek = await create({
        timezone: 'UTC',
        slots: [{ days: [weekdayIn(3)], start: '00:00', end: '00:01' }],
      });
      const opens = Date.parse(String(nextWeek.body.next_window_at));
      assert.ok(
        opens > Date.now() + 86_400_000 && opens < Date.now() + 4 * 86_400_000,
        String(nextWeek.body.next_window_at),
      );
      assert.equal(new Date(opens).getUTCHours(), 0);

      for (const [extra, field] of [
        [{ timezone: 'Mars/Olympus' }, 'timezone'],
        [{ slots: [] }, 'slots'],
        [{ slots: [{ days: ['mon'], start: '9:30', end: '18:00' }] }, 'slots[0].start'],
        [{ slots: [{ days: ['mon'], start: '10:00', end: '10:00' }] }, 'slots[0].end'],
        [{ slots: [{ days: ['mon', 'mon'], start: '10:00', end: '11:00' }] }, 'slots[0].days'],
        [{ max_concurrent: 6 }, 'max_concurrent'],
        [{ retry_count: 6 }, 'retry_count'],
        [{ re_attempt_period_secs: 299 }, 're_attempt_period_secs'],
        [{ budget_paise: 0 }, 'budget_paise'],
        [{ webhook_url: 'http://example.com/hook' }, 'webhook_url'],
        [{ status: 'play' }, 'status'],
        [{ name: '' }, 'name'],
      ] as const) {
        const refused = await create(extra);
        assert.equal(refused.status, 400, `${JSON.stringify(extra)}: ${refused.text}`);
        assert.equal(errorCode(refused), 'invalid_request');
        assert.ok(refused.text.includes(field), `${field} named in ${refused.text}`);
      }
      const noAgent = await create({ agent_id: 'agt_01JAAAAAAAAAAAAAAAAAAAAAAA' });
      assert.equal(noAgent.status, 404);
      assert.equal(errorCode(noAgent), 'not_found');
    });

    test('list newest first with a status filter and a cursor; edit; delete', async () => {
      const ids: string[] = [];
      for (const name of ['A', 'B', 'C']) ids.push((await create({ name })).body.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { data: Campaign[]; next_cursor: string | null } } = await api(
          'GET',
          `/v2/campaigns?status=paused&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200);
        seen.push(...page.body.data.map((c) => c.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(seen.slice(0, 3), [...ids].reverse());
      assert.deepEqual((await api<{ data: unknown[] }>('GET', '/v2/campaigns?status=play')).body.data, []);
      assert.equal((await api('GET', '/v2/campaigns?status=running')).status, 400);

      const id = ids[0] as string;
      const edited = await api<Campaign>('PATCH', `/v2/campaigns/${id}`, {
        body: {
          name: 'Renewals (west)',
          max_concurrent: 2,
          budget_paise: 50_000,
          webhook_url: receiver.url(),
        },
      });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual(
        [edited.body.name, edited.body.max_concurrent, edited.body.budget_paise],
        ['Renewals (west)', 2, 50_000],
      );
      const cleared = await api<Campaign>('PATCH', `/v2/campaigns/${id}`, { body: { budget_paise: null } });
      assert.equal(cleared.body.budget_paise, null);
      assert.equal(cleared.body.webhook_url, receiver.url());
      assert.equal((await api('PATCH', `/v2/campaigns/${id}`, { body: { slots: [] } })).status, 400);

      const removed = await api('DELETE', `/v2/campaigns/${ids[1]}`);
      assert.deepEqual(removed.body, { id: ids[1], object: 'campaign', deleted: true });
      assert.equal((await api('GET', `/v2/campaigns/${ids[1]}`)).status, 404);
      assert.equal((await api('DELETE', `/v2/campaigns/${ids[1]}`)).status, 404);
    });

    test('contacts from JSON and CSV: duplicates and rejected rows reported; a failed upload leaves nothing', async () => {
      const id = (await create()).body.id;
      const json = await api<Upload>('POST', `/v2/campaigns/${id}/contacts`, {
        body: {
          contacts: [
            { to: '+919800000001', variables: { name: 'Asha' } },
            { to: '+919800000002' },
            { to: '+919800000001' },
            { to: '+14155550100' },
            { to: '+919800000003', variables: { 'bad name': 'x' } },
          ],
        },
      });
      assert.equal(json.status, 200, json.text);
      assert.deepEqual([json.body.accepted, json.body.duplicates], [2, 1]);
      assert.deepEqual(
        json.body.rejected.map((r) => r.row),
        [4, 5],
      );
      assert.match(json.body.rejected[0]?.message ?? '', /to: only Indian/);

      const rows = ['to,name,plan'];
      for (let i = 0; i < 2_500; i++)
        rows.push(`+9197${String(i).padStart(8, '0')},Caller ${i},${i % 2 ? 'gold' : ''}`);
      rows.push('+919800000002,Again,x', 'not-a-number,Bad,x');
      const uploaded = await api<Upload>('POST', `/v2/campaigns/${id}/contacts`, csv(`${rows.join('\n')}\n`));
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.deepEqual([uploaded.body.accepted, uploaded.body.duplicates], [2_500, 1]);
      assert.deepEqual(
        uploaded.body.rejected.map((r) => r.row),
        [2_502],
      );

      const page = await api<{
        data: Array<{ to: string; variables: Record<string, string>; status: string }>;
      }>('GET', `/v2/campaigns/${id}/contacts?status=pending&limit=3`);
      assert.deepEqual(
        page.body.data.map((c) => c.to),
        ['+919800000001', '+919800000002', '+919700000000'],
      );
      assert.deepEqual(page.body.data[2]?.variables, { name: 'Caller 0' }, 'empty cells are left out');
      assert.deepEqual(page.body.data[0]?.variables, { name: 'Asha' });

      const broken = await api(
        'POST',
        `/v2/campaigns/${id}/contacts`,
        csv('to,name\n+919600000001,"unclosed\n'),
      );
      assert.equal(broken.status, 400, broken.text);
      assert.match(broken.text, /malformed CSV/);
      const badHeader = await api(
        'POST',
        `/v2/campaigns/${id}/contacts`,
        csv('to,First Name\n+919600000002,A\n'),
      );
      assert.equal(badHeader.status, 400);
      assert.match(badHeader.text, /First Name/);
      assert.equal((await api('POST', `/v2/campaigns/${id}/contacts`, csv('name\nA\n'))).status, 400);
      const campaign = await api<Campaign>('GET', `/v2/campaigns/${id}`);
      assert.equal(campaign.body.progress.contacts.total, 2_502, 'nothing of the failed uploads was kept');
      assert.equal(campaign.body.progress.contacts.pending, 2_502);
    });

    test('transitions: no start without a media gateway (503 fleet_offline), stop is for good with one signed campaign.stopped event', async () => {
      const id = (await create({ webhook_url: receiver.url() })).body.id;
      const start = await api('POST', `/v2/campaigns/${id}/start`);
      assert.equal(start.status, 503, start.text);
      assert.equal(errorCode(start), 'fleet_offline');
      assert.equal(start.headers.get('retry-after'), '300');
      const resume = await api('POST', `/v2/campaigns/${id}/resume`);
      assert.equal(resume.status, 409, 'a campaign never started has no dialler standing by');
      const paused = await api('POST', `/v2/campaigns/${id}/pause`);
      assert.equal(paused.status, 409, 'only a running campaign pauses');
      assert.equal((await api<Campaign>('GET', `/v2/campaigns/${id}`)).body.pause_reason, 'not_started');

      const before = receiver.processed.size;
      const stopped = await api<Campaign>('POST', `/v2/campaigns/${id}/stop`);
      assert.equal(stopped.status, 200, stopped.text);
      assert.equal(stopped.body.status, 'stopped');
      assert.equal(stopped.body.pause_reason, null);
      assert.equal(stopped.body.next_window_at, null, 'a stopped campaign has no next window');
      for (const [method, path, body] of [
        ['POST', `/v2/campaigns/${id}/stop`, undefined],
        ['POST', `/v2/campaigns/${id}/start`, undefined],
        ['POST', `/v2/campaigns/${id}/resume`, undefined],
        ['POST', `/v2/campaigns/${id}/contacts`, { contacts: [{ to: '+919800000009' }] }],
      ] as const) {
        const refused = await api(method, path, body ? { body } : {});
        assert.equal(refused.status, 409, `${path}: ${refused.text}`);
        assert.equal(errorCode(refused), 'conflict');
      }

      const until = Date.now() + 15_000;
      while (receiver.processed.size === before && Date.now() < until) await sleep(50);
      const event = [...receiver.processed.values()]
        .map((raw) => JSON.parse(raw.toString()) as { type: string; data: { campaign: Campaign } })
        .find((e) => e.type === 'campaign.stopped' && e.data.campaign.id === id);
      assert.ok(event, 'campaign.stopped delivered');
      assert.equal(event.data.campaign.status, 'stopped');
      assert.ok(
        receiver.requests.filter((r) => r.answered === 200).every((r) => r.verified),
        'signed',
      );
    });

    test("another workspace's campaigns are out of sight", async () => {
      const id = (await create()).body.id;
      const other = await provisionWorkspace(p.platform.store, {
        name: 'Other',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const theirs = client(p.url, other.api_key);
      for (const [method, path] of [
        ['GET', `/v2/campaigns/${id}`],
        ['PATCH', `/v2/campaigns/${id}`],
        ['DELETE', `/v2/campaigns/${id}`],
        ['POST', `/v2/campaigns/${id}/stop`],
        ['GET', `/v2/campaigns/${id}/contacts`],
      ] as const) {
        const hidden = await theirs(method, path, method === 'PATCH' ? { body: { name: 'x' } } : {});
        assert.equal(hidden.status, 404, `${method} ${path}`);
      }
      assert.deepEqual((await theirs<{ data: unknown[] }>('GET', '/v2/campaigns')).body.data, []);
    });
  });
}
