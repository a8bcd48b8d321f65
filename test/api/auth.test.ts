/** Authentication and tenancy exactly as the interface's "Authentication" section says. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import {
  backends,
  client,
  errorCode,
  request,
  startTestPlatform,
  type TestPlatform,
} from '../support/platform.ts';

for (const backend of await backends()) {
  describe(`authentication and tenancy (${backend.name})`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform(backend);
    });
    after(() => p.close());

    test('no Authorization header: 401 unauthorized', async () => {
      const r = await request(p.url, 'GET', '/v2/agents');
      assert.equal(r.status, 401);
      assert.equal(errorCode(r), 'unauthorized');
      assert.equal(typeof (r.body.error as { message: string }).message, 'string');
    });

    test('a header without the Bearer prefix: 401', async () => {
      for (const header of [p.apiKey, `Basic ${p.apiKey}`, `bearer ${p.apiKey}`, 'Bearer', 'Bearer ']) {
        const r = await request(p.url, 'GET', '/v2/agents', { headers: { authorization: header } });
        assert.equal(r.status, 401, header);
        assert.equal(errorCode(r), 'unauthorized');
      }
    });

    test('an unknown or absurd key: 401', async () => {
      for (const key of ['sk_live_00000000000000000000000000000000', 'x'.repeat(5000), 'sk_live_ü']) {
        const r = await request(p.url, 'GET', '/v2/agents', { key });
        assert.equal(r.status, 401);
        assert.equal(errorCode(r), 'unauthorized');
      }
    });

    test('a revoked key: 403 forbidden, while another key of the workspace still works', async () => {
      const { key } = await p.platform.store.apiKeys.create(p.workspaceId);
      assert.equal((await request(p.url, 'GET', '/v2/wallet', { key })).status, 200);
      assert.equal(await p.platform.store.apiKeys.revoke(key), true);
      const r = await request(p.url, 'GET', '/v2/wallet', { key });
      assert.equal(r.status, 403);
      assert.equal(errorCode(r), 'forbidden');
      assert.equal((await request(p.url, 'GET', '/v2/wallet', { key: p.apiKey })).status, 200);
    });

    test("another workspace's agent is 404 on every route, exactly like an unknown id", async () => {
      const other = await provisionWorkspace(p.platform.store, {
        name: 'Other',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const mine = client(p.url, p.apiKey);
      const theirs = client(p.url, other.api_key);
      const created = await theirs('POST', '/v2/agents', { body: { name: 'Theirs' } });
      assert.equal(created.status, 201);
      const id = created.body.id as string;
      const unknown = 'agt_01JZZZZZZZZZZZZZZZZZZZZZZZ';
      for (const [method, path, body] of [
        ['GET', `/v2/agents/${id}`],
        ['PATCH', `/v2/agents/${id}`, { name: 'Mine now' }],
        ['DELETE', `/v2/agents/${id}`],
        ['GET', `/v2/agents/${id}/revisions`],
        ['GET', `/v2/agents/${id}/revisions/1`],
        ['POST', `/v2/agents/${id}/revisions/1/rollback`],
        ['POST', `/v2/agents/${id}/publish`],
        ['GET', `/v2/agents/${id}/flow`],
        ['PUT', `/v2/agents/${id}/flow`, { nodes: [{ id: 's', type: 'startCall' }], edges: [] }],
      ] as const) {
        const r = await mine(method, path, body ? { body } : {});
        const u = await mine(method, path.replace(id, unknown), body ? { body } : {});
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(errorCode(r), 'not_found');
        assert.equal(u.status, 404);
        assert.equal(
          (r.body.error as { message: string }).message,
          (u.body.error as { message: string }).message.replace(unknown, id),
        );
      }
      const list = await mine('GET', '/v2/agents');
      assert.ok(!(list.body.data as Array<{ id: string }>).some((a) => a.id === id));
      assert.equal((await theirs('GET', `/v2/agents/${id}`)).body.name, 'Theirs');
      const wallet = await theirs('GET', '/v2/wallet');
      assert.equal(wallet.body.balance_inr, 0);
    });
  });
}
