/**
 * List routes take exactly their documented query parameters: `limit`, then `cursor` (a page's `next_cursor`)
 * or `starting_after` (an item's id), plus each route's filters. Anything else, or a malformed value, is
 * `400 invalid_request` naming the parameter: a client never silently gets the first page again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type ApiResponse,
  backends,
  client,
  errorCode,
  startTestPlatform,
  type TestPlatform,
} from '../support/platform.ts';

type Page = {
  object: string;
  data: Array<{ id: string; revision?: number }>;
  has_more: boolean;
  next_cursor: string | null;
};

function assertRefused(response: ApiResponse, parameter: string, context: string): void {
  assert.equal(response.status, 400, `${context}: ${response.text}`);
  assert.equal(errorCode(response), 'invalid_request', context);
  const message = (response.body.error as { message: string }).message;
  assert.ok(message.startsWith(parameter), `${context}: "${message}" names ${parameter}`);
}

for (const backend of await backends()) {
  describe(`list parameters (${backend.name})`, () => {
    let p: TestPlatform;
    let api: ReturnType<typeof client>;
    let agentIds: string[];
    before(async () => {
      p = await startTestPlatform(backend);
      api = client(p.url, p.apiKey);
      agentIds = [];
      for (let i = 0; i < 5; i++) {
        const created = await api('POST', '/v2/agents', { body: { name: `Agent ${i}` } });
        agentIds.push(created.body.id as string);
      }
      for (let i = 0; i < 4; i++) {
        await api('PATCH', `/v2/agents/${agentIds[0]}`, { body: { name: `Agent 0, edit ${i}` } });
      }
    });
    after(() => p.close());

    test('next_cursor as cursor walks every agent once, newest first', async () => {
      const seen: string[] = [];
      let query = '?limit=2';
      for (let pages = 0; pages < 10; pages++) {
        const page = await api<Page>('GET', `/v2/agents${query}`);
        assert.equal(page.status, 200, page.text);
        seen.push(...page.body.data.map((a) => a.id));
        if (!page.body.next_cursor) break;
        query = `?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`;
      }
      assert.deepEqual(seen, [...agentIds].reverse());
    });

    test('starting_after takes an id of the list and continues after it', async () => {
      const page = await api<Page>('GET', `/v2/agents?limit=2&starting_after=${agentIds[3]}`);
      assert.equal(page.status, 200, page.text);
      assert.deepEqual(
        page.body.data.map((a) => a.id),
        [agentIds[2], agentIds[1]],
      );
      assert.equal(page.body.has_more, true);
    });

    test('a next_cursor passed as starting_after, or any non-id, is refused naming starting_after', async () => {
      const first = await api<Page>('GET', '/v2/agents?limit=2');
      const cursor = first.body.next_cursor;
      assert.ok(cursor);
      for (const value of [cursor, 'zzz', 'call_01ARZ3NDEKTSV4RRFFQ69G5FAV', `${agentIds[0]}x`]) {
        assertRefused(
          await api('GET', `/v2/agents?starting_after=${encodeURIComponent(value)}`),
          'starting_after',
          value,
        );
      }
    });

    test('a cursor this list did not return is refused naming cursor', async () => {
      const ledger = await api<Page>('GET', '/v2/wallet/transactions?limit=1');
      const foreign = Buffer.from(JSON.stringify({ after: 'txn_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).toString(
        'base64url',
      );
      for (const value of ['zzz', agentIds[0]!, foreign, ledger.body.data[0]?.id ?? 'txn_x']) {
        assertRefused(await api('GET', `/v2/agents?cursor=${encodeURIComponent(value)}`), 'cursor', value);
      }
      const first = await api<Page>('GET', '/v2/agents?limit=2');
      assertRefused(
        await api('GET', `/v2/agents?cursor=${first.body.next_cursor}&starting_after=${agentIds[1]}`),
        'cursor',
        'both',
      );
    });

    test('limit must be an integer from 1 to 100, given once', async () => {
      for (const value of ['0', '101', 'abc', '1.5', '-1', '', '1&limit=2']) {
        assertRefused(await api('GET', `/v2/agents?limit=${value}`), 'limit', `limit=${value}`);
      }
    });

    test('unknown parameters are refused on every list route, naming them and what is accepted', async () => {
      const routes = [
        '/v2/agents',
        `/v2/agents/${agentIds[0]}/revisions`,
        '/v2/calls',
        '/v2/wallet/transactions',
        '/v2/voices',
      ];
      for (const route of routes) {
        for (const unknown of ['page', 'offset', 'after', 'startingAfter']) {
          const r = await api('GET', `${route}?${unknown}=2`);
          assertRefused(r, `${unknown}: unknown query parameter`, `${route}?${unknown}`);
        }
      }
      const r = await api('GET', '/v2/calls?page=2');
      assert.match(
        (r.body.error as { message: string }).message,
        /accepted: limit, starting_after, cursor, status, agent_id, campaign_id, created_after, created_before$/,
      );
    });

    test('the OpenAPI document lists exactly the parameters each list route takes, described', async () => {
      const doc = (await api('GET', '/openapi.json')).body as {
        paths: Record<
          string,
          {
            get: {
              parameters: Array<{
                name: string;
                in: string;
                description?: string;
                schema: { description?: string };
              }>;
            };
          }
        >;
      };
      const expected: Record<string, string[]> = {
        '/v2/agents': ['limit', 'starting_after', 'cursor'],
        '/v2/agents/{id}/revisions': ['limit', 'starting_after', 'cursor'],
        '/v2/wallet/transactions': ['limit', 'starting_after', 'cursor'],
        '/v2/calls': [
          'limit',
          'starting_after',
          'cursor',
          'status',
          'agent_id',
          'campaign_id',
          'created_after',
          'created_before',
        ],
      };
      for (const [path, names] of Object.entries(expected)) {
        const query = doc.paths[path]?.get.parameters.filter((parameter) => parameter.in === 'query') ?? [];
        assert.deepEqual(
          query.map((parameter) => parameter.name),
          names,
          path,
        );
        for (const parameter of query.filter((q) => ['limit', 'starting_after', 'cursor'].includes(q.name))) {
          assert.ok(parameter.schema.description, `${path} describes ${parameter.name}`);
        }
      }
    });

    test('revisions: starting_after is a revision number, cursor the next_cursor', async () => {
      const route = `/v2/agents/${agentIds[0]}/revisions`;
      const first = await api<Page>('GET', `${route}?limit=2`);
      assert.deepEqual(
        first.body.data.map((r) => r.revision),
        [5, 4],
      );
      const next = await api<Page>('GET', `${route}?limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual(
        next.body.data.map((r) => r.revision),
        [3, 2],
      );
      const after = await api<Page>('GET', `${route}?starting_after=2`);
      assert.deepEqual(
        after.body.data.map((r) => r.revision),
        [1],
      );
      for (const value of ['zzz', agentIds[0]!, '0', '1.5']) {
        assertRefused(await api('GET', `${route}?starting_after=${value}`), 'starting_after', value);
      }
      assertRefused(await api('GET', `${route}?cursor=zzz`), 'cursor', 'cursor=zzz');
      assertRefused(await api('GET', `${route}?cursor=4&starting_after=2`), 'cursor', 'both');
    });

    test('calls and wallet transactions take ids of their own kind', async () => {
      const calls = await api<Page>('GET', '/v2/calls?starting_after=call_01ARZ3NDEKTSV4RRFFQ69G5FAV');
      assert.equal(calls.status, 200, calls.text);
      assertRefused(
        await api('GET', `/v2/calls?starting_after=${agentIds[0]}`),
        'starting_after',
        'agent id',
      );
      const ledger = await api<Page>('GET', '/v2/wallet/transactions');
      const txn = ledger.body.data[0]?.id;
      assert.ok(txn);
      assert.equal((await api('GET', `/v2/wallet/transactions?starting_after=${txn}`)).status, 200);
      assertRefused(
        await api('GET', '/v2/wallet/transactions?starting_after=zzz'),
        'starting_after',
        'starting_after=zzz',
      );
    });
  });
}
