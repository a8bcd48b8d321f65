/**
 * Secrets and tool definitions over real HTTP: secrets CRUD that never echoes a value, the value sealed at rest,
 * every problem of a tool definition listed at once, and deleting a secret a live agent's tool uses refused.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SQLITE_FILE_NAME } from '../../core/store/index.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Api = ReturnType<typeof client>;
type Details = { error: string; details: Array<{ path: string; message: string }> };

const VALUE = 'tok_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';

const lookupTool = (extra: Record<string, unknown> = {}) => ({
  name: 'lookup_order',
  phase: 'on_call',
  description: 'Look an order up by its id',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  request: {
    method: 'GET',
    url: 'https://shop.example.com/orders/{{ args.order_id }}?agent={{ agent.id }}',
    headers: { Authorization: 'Bearer {{ secrets.shop_token }}' },
  },
  ...extra,
});

for (const backend of await backends()) {
  describe(`secrets and tool definitions (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    before(async () => {
      p = await startTestPlatform(backend);
      api = client(p.url, p.apiKey);
    });
    after(() => p.close());

    test('create, read, list, replace and delete a secret; the value never comes back', async () => {
      const created = await api('POST', '/v2/secrets', { body: { name: 'shop_token', value: VALUE } });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'name', 'object', 'updated_at']);
      assert.equal(created.body.object, 'secret');
      assert.equal(created.body.name, 'shop_token');
      assert.ok(!created.text.includes(VALUE));

      const again = await api('POST', '/v2/secrets', { body: { name: 'shop_token', value: 'x' } });
      assert.equal(again.status, 409);
      assert.equal(errorCode(again), 'conflict');

      const read = await api('GET', '/v2/secrets/shop_token');
      assert.equal(read.status, 200);
      assert.ok(!read.text.includes(VALUE));
      const replaced = await api('PUT', '/v2/secrets/shop_token', { body: { value: `${VALUE}-2` } });
      assert.equal(replaced.status, 200, replaced.text);
      assert.ok(!replaced.text.includes(VALUE));
      assert.equal((await api('PUT', '/v2/secrets/nothing_here', { body: { value: 'v' } })).status, 404);

      for (const name of ['b_one', 'b_two', 'b_three']) {
        assert.equal((await api('POST', '/v2/secrets', { body: { name, value: 'v' } })).status, 201);
      }
      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { data: Array<{ name: string }>; next_cursor: string | null } } = await api(
          'GET',
          `/v2/secrets?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        names.push(...page.body.data.map((s) => s.name));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(names, ['b_one', 'b_three', 'b_two', 'shop_token']);
      const listed = await api('GET', '/v2/secrets');
      assert.ok(!listed.text.includes(VALUE));

      for (const name of ['b_one', 'b_two', 'b_three']) {
        const deleted = await api('DELETE', `/v2/secrets/${name}`);
        assert.deepEqual(deleted.body, { name, object: 'secret', deleted: true });
      }
      assert.equal((await api('GET', '/v2/secrets/b_one')).status, 404);
      assert.equal((await api('DELETE', '/v2/secrets/b_one')).status, 404);
    });

    test('names, values and the per-workspace count are bounded; unknown fields refused', async () => {
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ name: 'Upper', value: 'v' }, /^name/],
        [{ name: '9lives', value: 'v' }, /^name/],
        [{ name: `a${'b'.repeat(64)}`, value: 'v' }, /^name/],
        [{ name: 'ok_name', value: '' }, /^value/],
        [{ name: 'ok_name', value: 'é'.repeat(2049) }, /^value: at most 4096 bytes/],
        [{ name: 'ok_name', value: 'v', extra: 1 }, /extra/],
        [{ name: 'ok_name' }, /^value/],
      ];
      for (const [body, pattern] of bad) {
        const r = await api('POST', '/v2/secrets', { body });
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
        assert.equal(errorCode(r), 'invalid_request');
        assert.match((r.body.error as { message: string }).message, pattern);
      }
      assert.equal(
        (await api('POST', '/v2/secrets', { body: { name: 'edge', value: 'x'.repeat(4096) } })).status,
        201,
      );

      const other = await provisionWorkspace(p.platform.store, {
        name: 'Full',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const full = client(p.url, other.api_key);
      for (let i = 0; i < 100; i++) {
        const r = await full('POST', '/v2/secrets', { body: { name: `s${i}`, value: 'v' } });
        assert.equal(r.status, 201, r.text);
      }
      const over = await full('POST', '/v2/secrets', { body: { name: 's100', value: 'v' } });
      assert.equal(over.status, 409);
      assert.match((over.body.error as { message: string }).message, /100 secrets/);
      // Another workspace's secret is not there for this one, and the other way round.
      assert.equal((await full('GET', '/v2/secrets/shop_token')).status, 404);
      assert.equal((await api('GET', '/v2/secrets/s1')).status, 404);
    });

    test('every problem of the tool definitions is listed at once, with its path', async () => {
      const r = await api<Details>('POST', '/v2/agents', {
        body: {
          name: 'Broken tools',
          tools: [
            lookupTool({
              request: {
                method: 'GET',
                url: 'http://shop.example.com/{{ args.order }}',
                headers: { Authorization: 'Bearer {{ secrets.no_such_secret }}', 'X-Who': '{{ call.from }}' },
              },
            }),
            {
              name: 'crm',
              phase: 'pre_call',
              parameters: { type: 'object' },
              request: { url: 'https://crm.example.com/{{ args.id }}' },
            },
            { name: 'Bad-Name', phase: 'during_call', request: { url: 'https://127.0.0.1/x' } },
            {
              name: 'schema',
              phase: 'on_call',
              description: 'd',
              parameters: { type: 'object', properties: { n: { type: 'nonsense' } } },
              request: { url: 'https://a.example.com' },
            },
            {
              name: 'lookup_order',
              phase: 'post_call',
              request: { url: 'https://a.example.com', body: { a: 1 } },
              timeout_ms: 50,
            },
            { name: 'nodesc', phase: 'on_call', request: { url: 'https://{{ variables.host }}/x' } },
          ],
        },
      });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error, 'invalid_tools');
      const problems = r.body.details.map((d) => `${d.path}: ${d.message}`);
      for (const [where, what] of [
        ['tools[0].request.url', 'must be an https:// URL'],
        ['tools[0].request.url', '"order" is not declared'],
        ['tools[0].request.headers.Authorization', 'no secret "no_such_secret"'],
        ['tools[0].request.headers.X-Who', 'call has only'],
        ['tools[1].parameters', 'only on_call tools take arguments'],
        ['tools[1].request.url', 'arguments exist only in on_call tools'],
        ['tools[2].name', 'must match'],
        ['tools[2].phase', 'must be one of'],
        ['tools[2].request.url', 'loopback or private'],
        ['tools[3].parameters', 'invalid JSON Schema'],
        ['tools[4].request.body', 'no body'],
        ['tools[4].timeout_ms', 'from 100 to 10000'],
        ['tools[5].description', 'is required for on_call'],
        ['tools[5].request.url', 'no placeholder in the scheme or host'],
      ]) {
        assert.ok(
          problems.some((p) => p.startsWith(`${where}: `) && p.includes(what as string)),
          `missing ${where}: ${what} in\n${problems.join('\n')}`,
        );
      }
      const duplicate = await api<Details>('POST', '/v2/agents', {
        body: { name: 'Dupes', tools: [lookupTool(), lookupTool({ phase: 'on_call' })] },
      });
      assert.deepEqual(
        duplicate.body.details.map((d) => d.path),
        ['tools[1].name'],
      );
    });

    test('a valid tool saves with its defaults; a secret it uses cannot be deleted until no live agent uses it', async () => {
      const created = await api<{ id: string; tools: Array<Record<string, unknown>> }>('POST', '/v2/agents', {
        body: { name: 'Shop', tools: [lookupTool()] },
      });
      assert.equal(created.status, 201, created.text);
      const tool = created.body.tools[0] as {
        timeout_ms: number;
        request: { headers: Record<string, string> };
      };
      assert.equal(tool.timeout_ms, 5000);
      assert.equal(tool.request.headers.Authorization, 'Bearer {{ secrets.shop_token }}');

      const refused = await api('DELETE', '/v2/secrets/shop_token');
      assert.equal(refused.status, 409);
      assert.equal(errorCode(refused), 'conflict');
      assert.ok((refused.body.error as { message: string }).message.includes(created.body.id));

      // A flow node may offer only on_call tools of its agent (invalid_flow, as before).
      const flow = await api<Details>('PUT', `/v2/agents/${created.body.id}/flow`, {
        body: { nodes: [{ id: 'start', type: 'startCall', data: { tools: ['lookup_order', 'nope'] } }] },
      });
      assert.equal(flow.body.error, 'invalid_flow');
      assert.deepEqual(
        flow.body.details.map((d) => d.path),
        ['flow.nodes[0].data.tools[1]'],
      );

      assert.equal((await api('DELETE', `/v2/agents/${created.body.id}`)).status, 200);
      assert.equal((await api('DELETE', '/v2/secrets/shop_token')).status, 200);
      // A rollback or patch that names the deleted secret is refused now.
      const again = await api<Details>('POST', '/v2/agents', {
        body: { name: 'Shop 2', tools: [lookupTool()] },
      });
      assert.equal(again.body.error, 'invalid_tools');
      assert.equal(again.body.details[0]?.path, 'tools[0].request.headers.Authorization');
    });

    test('values are sealed at rest: the database file holds no trace of them', {
      skip: backend.databaseUrl !== undefined,
    }, async () => {
      const marker = 'sealed_marker_3c5e7a9b1d2f4e6a';
      assert.equal(
        (await api('POST', '/v2/secrets', { body: { name: 'marker', value: marker } })).status,
        201,
      );
      assert.equal((await api('PUT', '/v2/secrets/marker', { body: { value: `${marker}2` } })).status, 200);
      await p.platform.store.close().catch(() => {});
      const file = readFileSync(path.join(p.dataDir, SQLITE_FILE_NAME));
      for (const needle of [
        marker,
        Buffer.from(marker).toString('base64'),
        Buffer.from(marker).toString('hex'),
      ]) {
        assert.equal(file.includes(needle), false, `found ${needle}`);
      }
    });
  });
}
