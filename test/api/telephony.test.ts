/**
 * Phone numbers, pools and the rent flow over real HTTP: requirements to a rented number (₹1,500 from the wallet
 * in the number's transaction, 402 otherwise), versions and their 409s, health actions, incoming setup, pools and
 * `pool_in_use`, calls that ring from a number or a pool with `pool_busy` (Retry-After) and `pool_unavailable`,
 * concurrent calls on one pool never past a number's pace, and `503 telephony_unavailable` for a production
 * workspace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPlatform } from '../../cli/serve.ts';
import { loadConfig } from '../../core/config.ts';
import { NumberRenewals } from '../../core/telephony/renewals.ts';
import { SandboxTelephony } from '../../core/telephony/sandbox.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { uniqueName } from '../support/services.ts';

type Api = ReturnType<typeof client>;
type Json = Record<string, unknown>;
type NumberBody = {
  id: string;
  number: string;
  version: number;
  state: string;
  setup_error: string | null;
  pool_id: string | null;
  agent_id: string | null;
  incoming_enabled: boolean;
  health: { state: string; attempts_this_hour: number; resting_until: string | null };
  renews_at?: string | null;
  releases_at: string | null;
};

const HOUR_MS = 3_600_000;

/**
 * The platform's time runs at the real pace but starts ten minutes into an hour, so no suite run crosses the
 * hour boundary where this hour's attempts reset.
 */
const shift = 10 * 60_000 - (Date.now() % HOUR_MS);
const clock = { now: () => Date.now() + shift };

const DOCUMENTS = {
  business: { name: 'Acme Retail Pvt Ltd', registration_number: 'U52100MH2020PTC123456' },
  address: { line1: '12 MG Road', city: 'Bengaluru', state: 'Karnataka', postal_code: '560001' },
  documents: [
    { type: 'business_registration', url: 'https://docs.example.com/coi.pdf' },
    { type: 'gst_certificate', url: 'https://docs.example.com/gst.pdf' },
  ],
};

async function expectError(
  response: Promise<{ status: number; body: Json; text: string }>,
  status: number,
  code: string,
  messageIncludes?: string,
) {
  const r = await response;
  assert.equal(r.status, status, r.text);
  assert.equal(errorCode(r as never), code, r.text);
  if (messageIncludes) {
    assert.ok((r.body.error as { message: string }).message.includes(messageIncludes), r.text);
  }
  return r;
}

/** Submits the documents, refreshes until approved, and rents `count` numbers of `area`. */
async function rentNumbers(api: Api, count: number, area = '80'): Promise<NumberBody[]> {
  const latest = (await api('GET', '/v2/telephony/requirements')).body.submission as {
    status: string;
  } | null;
  if (latest?.status !== 'approved') {
    assert.equal((await api('POST', '/v2/telephony/submit', { body: DOCUMENTS })).status, 201);
    assert.equal((await api('POST', '/v2/telephony/refresh')).body.status, 'approved');
  }
  const found = (await api<{ data: Array<{ number: string }> }>('GET', `/v2/telephony/search?area=${area}`))
    .body.data;
  const rented: NumberBody[] = [];
  for (const { number } of found.slice(0, count)) {
    const quote = await api<{ id: string }>('POST', '/v2/telephony/quote', { body: { number } });
    const r = await api<NumberBody>('POST', '/v2/telephony/rent', {
      body: { number, quote_id: quote.body.id },
    });
    assert.equal(r.status, 201, r.text);
    rented.push(r.body);
  }
  assert.equal(rented.length, count);
  return rented;
}

for (const backend of await backends()) {
  describe(`phone numbers, pools and rental (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    let agentId: string;
    before(async () => {
      p = await startTestPlatform(backend, { env: { BOOTSTRAP_BALANCE_INR: '100000' }, clock });
      api = client(p.url, p.apiKey);
      const agent = await api('POST', '/v2/agents', {
        body: { name: 'Numbers', language: 'en-IN', first_message: 'Hello' },
      });
      agentId = agent.body.id as string;
    });
    after(() => p.close());

    const workspace = async (mode: 'sandbox' | 'production', balancePaise: number) =>
      client(
        p.url,
        (await provisionWorkspace(p.platform.store, { name: `ws-${mode}`, mode, balancePaise })).api_key,
      );

    test('the rent flow: requirements, documents, review, search, quote and rent debiting ₹1,500', async () => {
      const requirements = await api('GET', '/v2/telephony/requirements');
      assert.equal(requirements.status, 200, requirements.text);
      assert.equal(requirements.body.submission, null);
      const types = requirements.body.number_types as Array<{ type: string; documents: unknown[] }>;
      assert.deepEqual(
        types.map((t) => t.type),
        ['local', 'mobile'],
      );
      assert.ok(types.every((t) => t.documents.length > 0));

      await expectError(api('POST', '/v2/telephony/refresh'), 404, 'not_found');
      const search = await api<{ data: Array<{ number: string; area: string; monthly_inr: number }> }>(
        'GET',
        '/v2/telephony/search?area=22&contains=2',
      );
      assert.equal(search.status, 200, search.text);
      assert.ok(search.body.data.length > 0 && search.body.data.length <= 20);
      for (const n of search.body.data) {
        assert.match(n.number, /^\+9122\d{8}$/);
        assert.ok(n.number.slice(3).includes('2'));
        assert.equal(n.area, '22');
        assert.equal(n.monthly_inr, 500);
      }
      const number = search.body.data[0]?.number as string;
      const quote = await api('POST', '/v2/telephony/quote', { body: { number } });
      assert.equal(quote.status, 201, quote.text);
      assert.equal(quote.body.amount_inr, 1500);
      assert.equal(quote.body.monthly_inr, 500);
      assert.equal(quote.body.period_months, 3);
      await expectError(
        api('POST', '/v2/telephony/rent', { body: { number, quote_id: quote.body.id } }),
        409,
        'conflict',
        'submit',
      );

      const submitted = await api('POST', '/v2/telephony/submit', { body: DOCUMENTS });
      assert.equal(submitted.status, 201, submitted.text);
      assert.equal(submitted.body.status, 'pending');
      await expectError(api('POST', '/v2/telephony/submit', { body: DOCUMENTS }), 409, 'conflict');
      await expectError(
        api('POST', '/v2/telephony/rent', { body: { number, quote_id: quote.body.id } }),
        409,
        'conflict',
        'pending',
      );
      const refreshed = await api('POST', '/v2/telephony/refresh');
      assert.equal(refreshed.body.status, 'approved', refreshed.text);
      assert.equal(
        ((await api('GET', '/v2/telephony/requirements')).body.submission as Json).status,
        'approved',
      );

      const before = (await api('GET', '/v2/wallet')).body.balance_paise as number;
      const rented = await api<NumberBody>('POST', '/v2/telephony/rent', {
        body: { number, quote_id: quote.body.id },
      });
      assert.equal(rented.status, 201, rented.text);
      assert.match(rented.body.id, /^pn_[0-9A-Z]{26}$/);
      assert.equal(rented.body.number, number);
      assert.equal(rented.body.version, 1);
      assert.equal(rented.body.state, 'imported');
      assert.equal(rented.body.health.state, 'warming');
      assert.ok(rented.body.renews_at);
      assert.equal((await api('GET', '/v2/wallet')).body.balance_paise, before - 150_000);
      const ledger = await api<{ data: Array<{ kind: string; reference: string; amount_paise: number }> }>(
        'GET',
        '/v2/wallet/transactions?limit=1',
      );
      assert.deepEqual(
        { ...ledger.body.data[0] },
        { ...ledger.body.data[0], kind: 'number_rental', reference: rented.body.id, amount_paise: -150_000 },
      );
      await expectError(
        api('POST', '/v2/telephony/rent', { body: { number, quote_id: quote.body.id } }),
        409,
        'conflict',
      );
      const again = await api<{ data: Array<{ number: string }> }>('GET', '/v2/telephony/search?area=22');
      assert.ok(!again.body.data.some((n) => n.number === number), 'a rented number is no longer for rent');
      await expectError(api('POST', '/v2/telephony/quote', { body: { number } }), 404, 'not_found');

      // Three months on, the worker's renewal charges the next period once, however often it runs.
      const renewsAt = Date.parse(rented.body.renews_at as string);
      const renewals = new NumberRenewals({
        store: p.platform.store,
        providers: { sandbox: new SandboxTelephony() },
        logger: { info: () => undefined, warn: () => undefined },
        clock: { now: () => renewsAt },
      });
      await Promise.all([renewals.sweep(), renewals.sweep()]);
      await renewals.sweep();
      const renewed = await api<NumberBody>('GET', `/v2/phone-numbers/${rented.body.id}`);
      assert.ok(Date.parse(renewed.body.renews_at as string) > renewsAt + 88 * 24 * HOUR_MS);
      assert.equal(renewed.body.version, 2);
      const charges = await api<{ data: Array<{ kind: string; reference: string; amount_paise: number }> }>(
        'GET',
        '/v2/wallet/transactions?limit=5',
      );
      const rentals = charges.body.data.filter((t) => t.kind === 'number_rental');
      assert.deepEqual(
        rentals.map((t) => t.amount_paise),
        [-150_000, -150_000],
      );
      assert.match(rentals[0]?.reference ?? '', new RegExp(`^${rented.body.id}:renewal:`));
      assert.equal((await api('GET', '/v2/wallet')).body.balance_paise, before - 300_000);
    });

    test('only Indian numbers; a bad query or body names the field', async () => {
      await expectError(
        api('POST', '/v2/telephony/quote', { body: { number: '+14155550100' } }),
        400,
        'invalid_request',
        'number',
      );
      await expectError(api('GET', '/v2/telephony/search?area=abc'), 400, 'invalid_request', 'area');
      await expectError(
        api('POST', '/v2/telephony/submit', {
          body: { ...DOCUMENTS, address: { ...DOCUMENTS.address, postal_code: '12' } },
        }),
        400,
        'invalid_request',
        'postal_code',
      );
    });

    test('a wallet that cannot pay the first three months gets 402 and no number', async () => {
      const poor = await workspace('sandbox', 100_000);
      assert.equal((await poor('POST', '/v2/telephony/submit', { body: DOCUMENTS })).status, 201);
      await poor('POST', '/v2/telephony/refresh');
      const number = (await poor<{ data: Array<{ number: string }> }>('GET', '/v2/telephony/search?area=11'))
        .body.data[0]?.number as string;
      const quote = await poor('POST', '/v2/telephony/quote', { body: { number } });
      await expectError(
        poor('POST', '/v2/telephony/rent', { body: { number, quote_id: quote.body.id } }),
        402,
        'insufficient_balance',
      );
      assert.deepEqual((await poor('GET', '/v2/phone-numbers')).body.data, []);
      assert.equal((await poor('GET', '/v2/wallet')).body.balance_paise, 100_000);
    });

    test('a rejected review says why, and new documents can be sent', async () => {
      const other = await workspace('sandbox', 0);
      const rejected = { ...DOCUMENTS, business: { ...DOCUMENTS.business, name: 'Reject Me Traders' } };
      assert.equal((await other('POST', '/v2/telephony/submit', { body: rejected })).status, 201);
      const review = await other<{ status: string; reasons: string[] }>('POST', '/v2/telephony/refresh');
      assert.equal(review.body.status, 'rejected');
      assert.ok(review.body.reasons.length > 0);
      assert.equal((await other('POST', '/v2/telephony/submit', { body: DOCUMENTS })).status, 201);
    });

    test('a production workspace without a provider answers 503 telephony_unavailable everywhere', async () => {
      const production = await workspace('production', 0);
      for (const [method, path] of [
        ['GET', '/v2/phone-numbers'],
        ['GET', '/v2/phone-numbers/pn_01JAAAAAAAAAAAAAAAAAAAAAAA'],
        ['GET', '/v2/phone-pools'],
        ['POST', '/v2/phone-pools'],
        ['GET', '/v2/telephony/requirements'],
        ['GET', '/v2/telephony/search'],
        ['POST', '/v2/telephony/refresh'],
      ] as const) {
        const body =
          method === 'POST' && path === '/v2/phone-pools'
            ? { name: 'x', purpose: 'other', number_ids: [] }
            : undefined;
        await expectError(production(method, path, body ? { body } : {}), 503, 'telephony_unavailable');
      }
    });

    test('numbers: read, list, versions, agent, incoming, health actions and delete', async () => {
      const [first, second] = await rentNumbers(api, 2, '44');
      assert.ok(first && second);
      const one = await api<NumberBody>('GET', `/v2/phone-numbers/${first.id}`);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, first);
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { data: NumberBody[]; next_cursor: string | null } } = await api(
          'GET',
          `/v2/phone-numbers?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        );
        ids.push(...page.body.data.map((n) => n.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.ok(ids.indexOf(second.id) < ids.indexOf(first.id), 'newest first');

      await expectError(
        api('POST', `/v2/phone-numbers/${first.id}/incoming`, { body: { enabled: true, version: 1 } }),
        409,
        'conflict',
        'agent',
      );
      await expectError(
        api('PATCH', `/v2/phone-numbers/${first.id}`, {
          body: { agent_id: 'agt_01JZZZZZZZZZZZZZZZZZZZZZZZ', version: 1 },
        }),
        404,
        'not_found',
      );
      await expectError(
        api('PATCH', `/v2/phone-numbers/${first.id}`, { body: { agent_id: agentId } }),
        400,
        'invalid_request',
        'version',
      );
      const assigned = await api<NumberBody>('PATCH', `/v2/phone-numbers/${first.id}`, {
        body: { agent_id: agentId, version: 1 },
      });
      assert.equal(assigned.status, 200, assigned.text);
      assert.equal(assigned.body.agent_id, agentId);
      assert.equal(assigned.body.version, 2);
      await expectError(
        api('PATCH', `/v2/phone-numbers/${first.id}`, { body: { agent_id: null, version: 1 } }),
        409,
        'conflict',
        'version',
      );
      const ready = await api<NumberBody>('POST', `/v2/phone-numbers/${first.id}/incoming`, {
        body: { enabled: true, version: 2 },
      });
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(
        [ready.body.state, ready.body.incoming_enabled, ready.body.version],
        ['ready', true, 3],
      );

      const rest = await api<NumberBody>('POST', `/v2/phone-numbers/${first.id}/rest`, {
        body: { version: 3 },
      });
      assert.equal(rest.body.health.state, 'resting', rest.text);
      const restingFor = Date.parse(rest.body.health.resting_until as string) - clock.now();
      assert.ok(restingFor > 44 * 60_000 && restingFor <= 45 * 60_000, `${restingFor}`);
      const resumed = await api<NumberBody>('POST', `/v2/phone-numbers/${first.id}/resume`, {
        body: { version: 4 },
      });
      assert.equal(resumed.body.health.state, 'warming');
      assert.equal(resumed.body.health.resting_until, null);
      const retired = await api<NumberBody>('POST', `/v2/phone-numbers/${first.id}/retire`, {
        body: { version: 5 },
      });
      assert.equal(retired.body.health.state, 'retired');
      await expectError(
        api('POST', `/v2/phone-numbers/${first.id}/resume`, { body: { version: 6 } }),
        409,
        'conflict',
        'retired',
      );
      await expectError(
        api('POST', `/v2/phone-numbers/${first.id}/rest`, { body: { version: 5 } }),
        409,
        'conflict',
      );
      assert.equal(
        (await api<NumberBody>('GET', `/v2/phone-numbers/${first.id}`)).body.state,
        'ready',
        'a retired number still answers',
      );

      const other = await workspace('sandbox', 0);
      await expectError(other('GET', `/v2/phone-numbers/${first.id}`), 404, 'not_found');
      await expectError(other('DELETE', `/v2/phone-numbers/${first.id}`), 404, 'not_found');

      const deleted = await api('DELETE', `/v2/phone-numbers/${second.id}`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.deleted, true);
      assert.equal(deleted.body.releases_at, second.renews_at, 'released at the end of its paid period');
      const stopped = await api<NumberBody>('GET', `/v2/phone-numbers/${second.id}`);
      assert.equal(stopped.body.renews_at, null);
      assert.equal(stopped.body.releases_at, second.renews_at);
    });

    test('incoming setup that the provider refuses leaves the number in error with setup_error', async () => {
      const search = await api<{ data: Array<{ number: string }> }>('GET', '/v2/telephony/search?area=33');
      const number = search.body.data.find((n) => n.number.endsWith('5'))?.number as string;
      const quote = await api('POST', '/v2/telephony/quote', { body: { number } });
      const rented = await api<NumberBody>('POST', '/v2/telephony/rent', {
        body: { number, quote_id: quote.body.id },
      });
      assert.equal(rented.status, 201, rented.text);
      await api('PATCH', `/v2/phone-numbers/${rented.body.id}`, { body: { agent_id: agentId, version: 1 } });
      const failed = await api<NumberBody>('POST', `/v2/phone-numbers/${rented.body.id}/incoming`, {
        body: { enabled: true, version: 2 },
      });
      assert.equal(failed.status, 200, failed.text);
      assert.equal(failed.body.state, 'error');
      assert.equal(failed.body.incoming_enabled, false);
      assert.match(failed.body.setup_error ?? '', /refused/);
    });

    test('pools: create with the starting pace, read, list, change, and delete unless an agent calls from it', async () => {
      const [a, b, c] = await rentNumbers(api, 3, '20');
      assert.ok(a && b && c);
      const support = await api('POST', '/v2/phone-pools', {
        body: { name: 'Support', purpose: 'support', number_ids: [a.id, b.id] },
      });
      assert.equal(support.status, 201, support.text);
      assert.match(support.body.id as string, /^ppl_[0-9A-Z]{26}$/);
      assert.equal(support.body.object, 'phone_pool');
      assert.equal(support.body.max_per_hour, 40);
      assert.deepEqual(support.body.number_ids, [a.id, b.id].sort());
      assert.equal((await api<NumberBody>('GET', `/v2/phone-numbers/${a.id}`)).body.pool_id, support.body.id);

      await expectError(
        api('POST', '/v2/phone-pools', { body: { name: 'Taken', purpose: 'outreach', number_ids: [a.id] } }),
        409,
        'conflict',
        a.id,
      );
      await expectError(
        api('POST', '/v2/phone-pools', {
          body: { name: 'Ghost', purpose: 'outreach', number_ids: ['pn_01JZZZZZZZZZZZZZZZZZZZZZZZ'] },
        }),
        404,
        'not_found',
        'number_ids',
      );
      await expectError(
        api('POST', '/v2/phone-pools', { body: { name: 'x', purpose: 'spam', number_ids: [] } }),
        400,
        'invalid_request',
        'purpose',
      );

      const outreach = await api('POST', '/v2/phone-pools', {
        body: { name: 'Outreach', purpose: 'outreach', number_ids: [c.id], default_for_campaigns: true },
      });
      assert.equal(outreach.body.max_per_hour, 60);
      const changed = await api('PATCH', `/v2/phone-pools/${support.body.id}`, {
        body: { max_per_hour: 10, number_ids: [b.id], default_for_campaigns: true },
      });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual([changed.body.max_per_hour, changed.body.number_ids], [10, [b.id]]);
      assert.equal(
        (await api('GET', `/v2/phone-pools/${outreach.body.id}`)).body.default_for_campaigns,
        false,
      );
      assert.equal((await api<NumberBody>('GET', `/v2/phone-numbers/${a.id}`)).body.pool_id, null);
      const reset = await api('PATCH', `/v2/phone-pools/${support.body.id}`, {
        body: { max_per_hour: null },
      });
      assert.equal(reset.body.max_per_hour, 40);
      const listed = await api<{ data: Array<{ id: string }> }>('GET', '/v2/phone-pools');
      assert.deepEqual(
        listed.body.data.slice(0, 2).map((x) => x.id),
        [outreach.body.id, support.body.id],
      );

      const caller = await api('POST', '/v2/agents', {
        body: { name: 'Pool caller', language: 'en-IN', calls_from: { pool_id: support.body.id } },
      });
      assert.equal(caller.status, 201, caller.text);
      assert.deepEqual(caller.body.calls_from, { pool_id: support.body.id });
      const inUse = await expectError(
        api('DELETE', `/v2/phone-pools/${support.body.id}`),
        409,
        'pool_in_use',
      );
      assert.ok((inUse.body.error as { message: string }).message.includes(caller.body.id as string));
      await api('PATCH', `/v2/agents/${caller.body.id}`, { body: { calls_from: null } });
      const campaign = await api('POST', '/v2/campaigns', {
        body: {
          name: 'From the pool',
          agent_id: caller.body.id,
          pool_id: support.body.id,
          timezone: 'Asia/Kolkata',
          slots: [{ days: ['mon'], start: '10:00', end: '12:00' }],
        },
      });
      assert.equal(campaign.status, 201, campaign.text);
      await expectError(
        api('PATCH', `/v2/campaigns/${campaign.body.id}`, {
          body: { pool_id: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' },
        }),
        404,
        'not_found',
      );
      const usedByCampaign = await expectError(
        api('DELETE', `/v2/phone-pools/${support.body.id}`),
        409,
        'pool_in_use',
      );
      assert.ok(
        (usedByCampaign.body.error as { message: string }).message.includes(campaign.body.id as string),
      );
      await api('POST', `/v2/campaigns/${campaign.body.id}/stop`);
      const deleted = await api('DELETE', `/v2/phone-pools/${support.body.id}`);
      assert.deepEqual(deleted.body, { id: support.body.id, object: 'phone_pool', deleted: true });
      await expectError(api('GET', `/v2/phone-pools/${support.body.id}`), 404, 'not_found');
      assert.equal((await api<NumberBody>('GET', `/v2/phone-numbers/${b.id}`)).body.pool_id, null);
      const other = await workspace('sandbox', 0);
      await expectError(other('GET', `/v2/phone-pools/${outreach.body.id}`), 404, 'not_found');
    });

    test('calls ring from a named number, a pool, or the agent’s pool; pool_busy and pool_unavailable', async () => {
      const [x, y] = await rentNumbers(api, 2, '40');
      assert.ok(x && y);
      const to = '+919812345678';
      const direct = await api('POST', '/v2/calls', {
        body: { agent_id: agentId, to, phone_number_id: x.id },
      });
      assert.equal(direct.status, 202, direct.text);
      assert.deepEqual(
        [direct.body.from, direct.body.phone_number_id, direct.body.calls_from_source],
        [x.number, x.id, undefined],
      );
      await expectError(
        api('POST', '/v2/calls', {
          body: { agent_id: agentId, to, phone_number_id: x.id, pool_id: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' },
        }),
        400,
        'invalid_request',
        'pool_id',
      );

      // Warming numbers call at half the pool's pace: 2 an hour each at max_per_hour 4.
      const pool = await api('POST', '/v2/phone-pools', {
        body: { name: 'Tight', purpose: 'reminders', max_per_hour: 4, number_ids: [x.id, y.id] },
      });
      const picked: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await api('POST', '/v2/calls', { body: { agent_id: agentId, to, pool_id: pool.body.id } });
        assert.equal(r.status, 202, r.text);
        assert.equal(r.body.calls_from_source, 'pool');
        assert.equal(r.body.pool_id, pool.body.id);
        picked.push(r.body.phone_number_id as string);
        const fetched = await api('GET', `/v2/calls/${r.body.id}`);
        assert.equal(fetched.body.from, r.body.from);
      }
      // x had one call already this hour, so y goes first, then they alternate.
      assert.deepEqual(picked, [y.id, x.id, y.id]);
      const busy = await expectError(
        api('POST', '/v2/calls', { body: { agent_id: agentId, to, pool_id: pool.body.id } }),
        409,
        'pool_busy',
      );
      const untilHour = Math.ceil(
        (Math.floor(clock.now() / HOUR_MS) * HOUR_MS + HOUR_MS - clock.now()) / 1000,
      );
      const retryAfter = Number((busy as unknown as { headers: Headers }).headers.get('retry-after'));
      assert.ok(
        Math.abs(retryAfter - untilHour) <= 2,
        `Retry-After ${retryAfter}, hour ends in ${untilHour}s`,
      );
      const xNow = await api<NumberBody>('GET', `/v2/phone-numbers/${x.id}`);
      assert.equal(xNow.body.health.attempts_this_hour, 2);

      // An agent's pool is where its calls ring from when the request names none.
      const poolAgent = await api('POST', '/v2/agents', {
        body: { name: 'From pool', language: 'en-IN', calls_from: { pool_id: pool.body.id } },
      });
      await expectError(
        api('POST', '/v2/calls', { body: { agent_id: poolAgent.body.id, to } }),
        409,
        'pool_busy',
      );
      await api('PATCH', `/v2/agents/${poolAgent.body.id}`, { body: { calls_from: null } });

      // A resting number frees up when its rest ends; a retired one never calls again.
      const [z] = await rentNumbers(api, 1, '79');
      assert.ok(z);
      const solo = await api('POST', '/v2/phone-pools', {
        body: { name: 'Solo', purpose: 'other', number_ids: [z.id] },
      });
      const soloAgent = await api('POST', '/v2/agents', {
        body: {
          name: 'Long',
          language: 'en-IN',
          max_duration_secs: 1800,
          calls_from: { pool_id: solo.body.id },
        },
      });
      assert.equal(soloAgent.status, 201, soloAgent.text);
      const restedFor = await api<NumberBody>('POST', `/v2/phone-numbers/${z.id}/rest`, {
        body: { version: z.version + 1 },
      });
      assert.equal(restedFor.body.health.state, 'resting', restedFor.text);
      const resting = await expectError(
        api('POST', '/v2/calls', { body: { agent_id: soloAgent.body.id, to } }),
        409,
        'pool_busy',
      );
      const restLeft = Math.ceil(
        (Date.parse(restedFor.body.health.resting_until as string) - clock.now()) / 1000,
      );
      const restRetry = Number((resting as unknown as { headers: Headers }).headers.get('retry-after'));
      assert.ok(Math.abs(restRetry - restLeft) <= 2, `Retry-After ${restRetry}, rest ends in ${restLeft}s`);

      await api('POST', `/v2/phone-numbers/${z.id}/retire`, { body: { version: restedFor.body.version } });
      await expectError(
        api('POST', '/v2/calls', { body: { agent_id: agentId, to, pool_id: solo.body.id } }),
        409,
        'pool_unavailable',
      );
      await expectError(
        api('POST', '/v2/calls', { body: { agent_id: agentId, to, phone_number_id: z.id } }),
        409,
        'conflict',
        'retired',
      );
      const empty = await api('POST', '/v2/phone-pools', {
        body: { name: 'Empty', purpose: 'other', number_ids: [] },
      });
      await expectError(
        api('POST', '/v2/calls', { body: { agent_id: agentId, to, pool_id: empty.body.id } }),
        409,
        'pool_unavailable',
      );
    });

    test('50 concurrent calls on one pool never take a number past its pace', async () => {
      const numbers = await rentNumbers(api, 5, '11');
      const pool = await api('POST', '/v2/phone-pools', {
        body: { name: 'Burst', purpose: 'outreach', max_per_hour: 12, number_ids: numbers.map((n) => n.id) },
      });
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          api('POST', '/v2/calls', {
            body: { agent_id: agentId, to: '+919812345670', pool_id: pool.body.id },
          }),
        ),
      );
      const admitted = results.filter((r) => r.status === 202);
      const busy = results.filter((r) => r.status === 409);
      assert.equal(admitted.length, 30, 'five warming numbers, six calls an hour each');
      assert.equal(busy.length, 20);
      assert.ok(busy.every((r) => errorCode(r) === 'pool_busy' && Number(r.headers.get('retry-after')) > 0));
      const perNumber = new Map<string, number>();
      for (const r of admitted) {
        const id = r.body.phone_number_id as string;
        perNumber.set(id, (perNumber.get(id) ?? 0) + 1);
      }
      assert.deepEqual([...perNumber.values()], [6, 6, 6, 6, 6]);
    });
  });
}

const shared = (await backends()).find((b) => b.databaseUrl && b.redisUrl);
describe('pool pace across two API nodes (PostgreSQL + Redis)', {
  skip: shared ? false : 'needs PostgreSQL and Redis',
}, () => {
  test('50 concurrent calls spread over two API nodes never take a number past its pace', {
    timeout: 60_000,
  }, async () => {
    const backend = shared as NonNullable<typeof shared>;
    const prefix = uniqueName('t');
    const first = await startTestPlatform(backend, {
      env: { BOOTSTRAP_BALANCE_INR: '100000', REDIS_PREFIX: prefix },
      clock,
    });
    const second = await startPlatform(
      loadConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        ROLES: 'api',
        DATA_DIR: first.dataDir,
        LOG_LEVEL: 'silent',
        API_RATE_PER_SEC: '100000',
        API_RATE_BURST: '100000',
        DATABASE_URL: backend.databaseUrl,
        DATABASE_SCHEMA: first.databaseSchema,
        REDIS_URL: backend.redisUrl,
        REDIS_PREFIX: prefix,
      }),
      { clock },
    );
    try {
      const one = client(first.url, first.apiKey);
      const two = client(second.apiUrl as string, first.apiKey);
      const agent = await one('POST', '/v2/agents', { body: { name: 'Burst', language: 'en-IN' } });
      const numbers = await rentNumbers(one, 4, '80');
      const pool = await two('POST', '/v2/phone-pools', {
        body: {
          name: 'Two nodes',
          purpose: 'support',
          max_per_hour: 10,
          number_ids: numbers.map((n) => n.id),
        },
      });
      assert.equal(pool.status, 201, pool.text);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 === 0 ? one : two)('POST', '/v2/calls', {
            body: { agent_id: agent.body.id, to: '+919812345671', pool_id: pool.body.id },
          }),
        ),
      );
      const admitted = results.filter((r) => r.status === 202);
      assert.equal(admitted.length, 20, 'four warming numbers, five calls an hour each');
      assert.ok(results.filter((r) => r.status !== 202).every((r) => errorCode(r) === 'pool_busy'));
      const perNumber = new Map<string, number>();
      for (const r of admitted) {
        const id = r.body.phone_number_id as string;
        perNumber.set(id, (perNumber.get(id) ?? 0) + 1);
      }
      assert.deepEqual([...perNumber.values()], [5, 5, 5, 5]);
      for (const n of numbers) {
        assert.equal(
          (await two<NumberBody>('GET', `/v2/phone-numbers/${n.id}`)).body.health.attempts_this_hour,
          5,
        );
      }
    } finally {
      await second.close();
      await first.close();
    }
  });
});
