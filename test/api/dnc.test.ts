/**
 * The do-not-call list over real HTTP: numbers listed from JSON and from CSV, invalid entries reported by
 * position while the valid ones are listed, read one (with `+` as typed or percent-encoded), cursor list,
 * delete, bounds on every input, another workspace's list out of sight, and the operator's campaigns switch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Api = ReturnType<typeof client>;
interface Addition {
  object: string;
  added: number;
  already_listed: number;
  rejected: Array<{ row: number; value: string; message: string }>;
}
interface Entry {
  object: string;
  number: string;
  reason: string | null;
  source: string;
  call_id: string | null;
  created_at: string;
}

const csv = (text: string) => ({ rawBody: text, headers: { 'content-type': 'text/csv' } });

for (const backend of await backends()) {
  describe(`do-not-call list (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    before(async () => {
      p = await startTestPlatform(backend);
      api = client(p.url, p.apiKey);
    });
    after(() => p.close());

    test('JSON: valid numbers listed once, invalid ones reported by position, a second listing keeps the first reason', async () => {
      const added = await api<Addition>('POST', '/v2/dnc', {
        body: {
          numbers: ['+919800000001', '+91 98000-00002', '+14155550100', 'call me', '+919800000001'],
          reason: 'asked on a support call',
        },
      });
      assert.equal(added.status, 200, added.text);
      assert.equal(added.body.object, 'dnc_addition');
      assert.equal(added.body.added, 2);
      assert.equal(added.body.already_listed, 0);
      assert.deepEqual(
        added.body.rejected.map((r) => [r.row, r.value]),
        [
          [3, '+14155550100'],
          [4, 'call me'],
        ],
      );
      assert.match(added.body.rejected[0]?.message ?? '', /only Indian \(\+91\)/);
      assert.match(added.body.rejected[1]?.message ?? '', /E\.164/);

      const again = await api<Addition>('POST', '/v2/dnc', {
        body: { numbers: ['+919800000002', '+919800000003'], reason: 'second' },
      });
      assert.deepEqual([again.body.added, again.body.already_listed], [1, 1]);

      const one = await api<Entry>('GET', '/v2/dnc/+919800000002');
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(
        { ...one.body, created_at: typeof one.body.created_at },
        {
          object: 'dnc_entry',
          number: '+919800000002',
          reason: 'asked on a support call',
          source: 'api',
          call_id: null,
          created_at: 'string',
        },
      );
      assert.equal((await api('GET', '/v2/dnc/%2B919800000003')).status, 200, 'percent-encoded +');
      const absent = await api('GET', '/v2/dnc/+919800000009');
      assert.equal(absent.status, 404);
      assert.equal(errorCode(absent), 'not_found');
      assert.equal((await api('GET', '/v2/dnc/not-a-number')).status, 404);
    });

    test('CSV: a number column by header, or the first column without one; the reason from the query', async () => {
      const withHeader = await api<Addition>(
        'POST',
        '/v2/dnc?reason=imported',
        csv('\uFEFFname,Number\n"Asha, R",+919811111111\nRavi,+91 98111 11112\n\nNone,+1415\n'),
      );
      assert.equal(withHeader.status, 200, withHeader.text);
      assert.equal(withHeader.body.added, 2);
      assert.deepEqual(
        withHeader.body.rejected.map((r) => r.row),
        [3],
      );
      assert.equal((await api<Entry>('GET', '/v2/dnc/+919811111112')).body.reason, 'imported');

      const bare = await api<Addition>('POST', '/v2/dnc', csv('+919811111113,extra\n+919811111114\n'));
      assert.equal(bare.body.added, 2, bare.text);
      assert.equal((await api<Entry>('GET', '/v2/dnc/+919811111113')).body.reason, null);

      const unclosed = await api('POST', '/v2/dnc', csv('number\n"+919811111115\n'));
      assert.equal(unclosed.status, 400);
      assert.match(unclosed.text, /malformed CSV/);
      const empty = await api('POST', '/v2/dnc', csv('number\n'));
      assert.equal(empty.status, 400, empty.text);
      assert.match(empty.text, /numbers/);
    });

    test('list in number order with a cursor; delete; every bound refused in the envelope', async () => {
      const numbers: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { data: Entry[]; next_cursor: string | null } } = await api(
          'GET',
          `/v2/dnc?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200);
        numbers.push(...page.body.data.map((e) => e.number));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(numbers, [...numbers].sort());
      assert.ok(numbers.length >= 7);
      assert.equal((await api('GET', '/v2/dnc?cursor=bm9wZQ')).status, 400);

      const removed = await api('DELETE', '/v2/dnc/+919800000001');
      assert.deepEqual(removed.body, { object: 'dnc_entry', number: '+919800000001', deleted: true });
      assert.equal((await api('GET', '/v2/dnc/+919800000001')).status, 404);
      assert.equal((await api('DELETE', '/v2/dnc/+919800000001')).status, 404);

      for (const [body, field] of [
        [{ numbers: [] }, 'numbers'],
        [
          { numbers: Array.from({ length: 10_001 }, (_, i) => `+9198${String(i).padStart(8, '0')}`) },
          'numbers',
        ],
        [{ numbers: ['+919800000004'], reason: 'x'.repeat(201) }, 'reason'],
        [{ numbers: ['+919800000004'], note: 'x' }, 'note'],
        [{ numbers: 'everyone' }, 'numbers'],
      ] as const) {
        const refused = await api('POST', '/v2/dnc', { body });
        assert.equal(refused.status, 400, refused.text);
        assert.equal(errorCode(refused), 'invalid_request');
        assert.match(refused.text, new RegExp(field));
      }
      const reasonInQuery = await api('POST', '/v2/dnc?reason=x', { body: { numbers: ['+919800000004'] } });
      assert.equal(reasonInQuery.status, 400);
    });

    test("another workspace's list is out of sight; the operator's switch closes campaigns and the list", async () => {
      const other = await provisionWorkspace(p.platform.store, {
        name: 'Other',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const theirs = client(p.url, other.api_key);
      assert.equal((await theirs('GET', '/v2/dnc/+919800000002')).status, 404);
      assert.deepEqual((await theirs<{ data: unknown[] }>('GET', '/v2/dnc')).body.data, []);
      assert.equal((await theirs('DELETE', '/v2/dnc/+919800000002')).status, 404);
      assert.equal((await api('GET', '/v2/dnc/+919800000002')).status, 200, 'still listed for its owner');

      await p.platform.store.workspaces.setCampaigns(other.workspace_id, false);
      for (const [method, path] of [
        ['GET', '/v2/dnc'],
        ['POST', '/v2/dnc'],
        ['GET', '/v2/dnc/+919800000002'],
        ['GET', '/v2/campaigns'],
        ['POST', '/v2/campaigns/cmp_x/start'],
      ] as const) {
        const closed = await theirs(
          method,
          path,
          method === 'POST' ? { body: { numbers: ['+919800000005'] } } : {},
        );
        assert.equal(closed.status, 503, `${method} ${path}: ${closed.text}`);
        assert.equal(errorCode(closed), 'campaigns_unavailable');
      }
      assert.equal(
        (await client(p.url, 'sk_live_ffffffffffffffffffffffffffffffff')('GET', '/v2/dnc')).status,
        401,
      );
      assert.equal((await api('GET', '/v2/dnc')).status, 200, 'the switch is per workspace');
      await p.platform.store.workspaces.setCampaigns(other.workspace_id, true);
      assert.equal((await theirs('GET', '/v2/dnc')).status, 200);
    });
  });
}
