/** The wallet routes over real HTTP: balance, held, available, and the paginated ledger. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Txn = {
  id: string;
  kind: string;
  amount_inr: number;
  amount_paise: number;
  balance_after_inr: number;
  reference: string;
};

for (const backend of await backends()) {
  describe(`wallet (${backend.name})`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform(backend, { env: { BOOTSTRAP_BALANCE_INR: '100' } });
    });
    after(() => p.close());

    test('balance, held and available in rupees reflect holds and charges', async () => {
      const api = client(p.url, p.apiKey);
      assert.deepEqual((await api('GET', '/v2/wallet')).body, {
        object: 'wallet',
        currency: 'INR',
        balance_inr: 100,
        held_inr: 0,
        available_inr: 100,
        balance_paise: 10000,
        held_paise: 0,
        available_paise: 10000,
      });
      const wallet = p.platform.store.wallet;
      await wallet.hold(p.workspaceId, { reference: 'call_hold_test', amountPaise: 1500, kind: 'call' });
      const held = (await api('GET', '/v2/wallet')).body;
      assert.equal(held.held_inr, 15);
      assert.equal(held.available_inr, 85);
      await wallet.capture(p.workspaceId, { reference: 'call_hold_test', amountPaise: 1234 });
      const after = (await api('GET', '/v2/wallet')).body;
      assert.equal(after.balance_inr, 87.66);
      assert.equal(after.held_inr, 0);
      assert.equal(after.available_paise, 8766);
    });

    test('the ledger is newest first and cursor-paginated', async () => {
      const api = client(p.url, p.apiKey);
      for (let i = 1; i <= 3; i++) {
        await p.platform.store.wallet.debit(p.workspaceId, {
          amountPaise: i * 100,
          reference: `tts_${i}`,
          kind: 'tts',
        });
      }
      const first = await api<{ data: Txn[]; has_more: boolean; next_cursor: string }>(
        'GET',
        '/v2/wallet/transactions?limit=2',
      );
      assert.deepEqual(
        first.body.data.map((t) => t.reference),
        ['tts_3', 'tts_2'],
      );
      assert.equal(first.body.data[0]?.amount_inr, -3);
      assert.equal(first.body.data[0]?.kind, 'tts');
      assert.equal(first.body.has_more, true);
      const rest = await api<{ data: Txn[]; has_more: boolean }>(
        'GET',
        `/v2/wallet/transactions?cursor=${first.body.next_cursor}`,
      );
      assert.deepEqual(rest.body.data.map((t) => t.reference).slice(0, 1), ['tts_1']);
      assert.equal(rest.body.has_more, false);
      const kinds = rest.body.data.map((t) => t.kind);
      assert.deepEqual(kinds.slice(-1), ['topup']);
      assert.equal(rest.body.data.at(-1)?.amount_inr, 100);
    });
  });
}
