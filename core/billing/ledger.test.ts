/**
 * The wallet ledger's conformance suite, on SQLite always and on PostgreSQL when DATABASE_URL is set: exact
 * balances for every operation, idempotency on references, refusals that write nothing, capture capped at
 * the hold, concurrent holds and debits that never overdraw, and rollback inside `store.transaction`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { isId } from '../ids.ts';
import { storeTargets } from '../store/testing/targets.ts';
import { InsufficientBalanceError, type Store, UnknownHoldError } from '../store/types.ts';

const targets = await storeTargets('ledger');

for (const target of targets) {
  describe(`wallet ledger on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    /** A new workspace holding `paise`. */
    const funded = async (paise: number) => {
      const ws = (await store.workspaces.create({ name: 'Acme', mode: 'production' })).id;
      if (paise > 0) await store.wallet.credit(ws, { amountPaise: paise, reference: 'topup_initial' });
      return ws;
    };
    const balance = (ws: string) => store.wallet.balance(ws);
    const entries = async (ws: string) => (await store.wallet.transactions(ws, { limit: 100 })).items;

    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    describe('credit', () => {
      it('adds to the balance with one entry, once per (kind, reference)', async () => {
        const ws = await funded(0);
        const entry = await store.wallet.credit(ws, { amountPaise: 50_000, reference: 'pay_1' });
        assert.ok(isId('transaction', entry.id));
        assert.deepEqual(entry, {
          id: entry.id,
          workspaceId: ws,
          kind: 'topup',
          amountPaise: 50_000,
          balanceAfterPaise: 50_000,
          reference: 'pay_1',
          description: 'Wallet top-up',
          createdAt: clock.now(),
        });
        assert.deepEqual(await store.wallet.credit(ws, { amountPaise: 50_000, reference: 'pay_1' }), entry);
        const adjustment = await store.wallet.credit(ws, {
          amountPaise: 25,
          reference: 'pay_1',
          kind: 'adjustment',
          description: 'goodwill',
        });
        assert.equal(adjustment.balanceAfterPaise, 50_025);
        assert.equal(adjustment.description, 'goodwill');
        assert.deepEqual(await balance(ws), { balancePaise: 50_025, heldPaise: 0, availablePaise: 50_025 });
        assert.equal((await entries(ws)).length, 2);
      });

      it('refuses amounts that are not positive whole paise', async () => {
        const ws = await funded(0);
        for (const amountPaise of [0, -1, 1.5, Number.NaN]) {
          await assert.rejects(store.wallet.credit(ws, { amountPaise, reference: 'bad' }), RangeError);
        }
        assert.deepEqual(await entries(ws), []);
      });
    });

    describe('hold, capture, release', () => {
      it('holds without charging, then captures the cost and releases the rest', async () => {
        const ws = await funded(10_000);
        const hold = await store.wallet.hold(ws, { reference: 'call_a', amountPaise: 1_500, kind: 'call' });
        assert.deepEqual(hold, {
          workspaceId: ws,
          reference: 'call_a',
          kind: 'call',
          amountPaise: 1_500,
          status: 'held',
          capturedPaise: 0,
          createdAt: clock.now(),
          settledAt: null,
        });
        assert.deepEqual(await balance(ws), {
          balancePaise: 10_000,
          heldPaise: 1_500,
          availablePaise: 8_500,
        });
        assert.deepEqual(
          await store.wallet.hold(ws, { reference: 'call_a', amountPaise: 9_999, kind: 'call' }),
          hold,
        );
        assert.deepEqual(await balance(ws), {
          balancePaise: 10_000,
          heldPaise: 1_500,
          availablePaise: 8_500,
        });

        clock.advance(60_000);
        const captured = await store.wallet.capture(ws, { reference: 'call_a', amountPaise: 305 });
        assert.deepEqual(captured, {
          ...hold,
          status: 'captured',
          capturedPaise: 305,
          settledAt: clock.now(),
        });
        assert.deepEqual(await balance(ws), { balancePaise: 9_695, heldPaise: 0, availablePaise: 9_695 });
        const [charge] = await entries(ws);
        assert.equal(charge?.kind, 'call');
        assert.equal(charge?.reference, 'call_a');
        assert.equal(charge?.amountPaise, -305);
        assert.equal(charge?.balanceAfterPaise, 9_695);

        clock.advance(1_000);
        assert.deepEqual(await store.wallet.capture(ws, { reference: 'call_a', amountPaise: 999 }), captured);
        assert.deepEqual(await store.wallet.release(ws, 'call_a'), captured);
        assert.deepEqual(await balance(ws), { balancePaise: 9_695, heldPaise: 0, availablePaise: 9_695 });
        assert.equal((await entries(ws)).length, 2, 'the top-up and one capture');
        assert.deepEqual(await store.wallet.getHold(ws, 'call_a'), captured);
      });

      it('captures zero without a ledger entry', async () => {
        const ws = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_zero', amountPaise: 600, kind: 'call' });
        const captured = await store.wallet.capture(ws, { reference: 'call_zero', amountPaise: 0 });
        assert.equal(captured.status, 'captured');
        assert.equal(captured.capturedPaise, 0);
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 0, availablePaise: 1_000 });
        assert.equal((await entries(ws)).length, 1);
      });

      it('caps a capture larger than the hold at the held amount', async () => {
        const ws = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_over', amountPaise: 400, kind: 'call' });
        const captured = await store.wallet.capture(ws, { reference: 'call_over', amountPaise: 10_000 });
        assert.equal(captured.capturedPaise, 400);
        assert.deepEqual(await balance(ws), { balancePaise: 600, heldPaise: 0, availablePaise: 600 });
        assert.equal((await entries(ws))[0]?.amountPaise, -400);
      });

      it('releases a hold whole, once', async () => {
        const ws = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_r', amountPaise: 700, kind: 'call' });
        const released = await store.wallet.release(ws, 'call_r');
        assert.equal(released?.status, 'released');
        assert.equal(released?.capturedPaise, 0);
        assert.equal(released?.settledAt, clock.now());
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 0, availablePaise: 1_000 });
        assert.deepEqual(await store.wallet.release(ws, 'call_r'), released);
        assert.deepEqual(await store.wallet.capture(ws, { reference: 'call_r', amountPaise: 500 }), released);
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 0, availablePaise: 1_000 });
        assert.equal(await store.wallet.release(ws, 'call_unknown'), undefined);
        await assert.rejects(
          store.wallet.capture(ws, { reference: 'call_unknown', amountPaise: 1 }),
          UnknownHoldError,
        );
      });

      it('refuses a hold above the available balance and writes nothing', async () => {
        const ws = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_1', amountPaise: 800, kind: 'call' });
        await assert.rejects(
          store.wallet.hold(ws, { reference: 'call_2', amountPaise: 201, kind: 'call' }),
          (error: unknown) =>
            error instanceof InsufficientBalanceError &&
            error.neededPaise === 201 &&
            error.availablePaise === 200,
        );
        assert.equal(await store.wallet.getHold(ws, 'call_2'), undefined);
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 800, availablePaise: 200 });
        const exact = await store.wallet.hold(ws, { reference: 'call_3', amountPaise: 200, kind: 'call' });
        assert.equal(exact.status, 'held');
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 1_000, availablePaise: 0 });
      });
    });

    describe('debit', () => {
      it('charges without a hold, once per (kind, reference), never into held money', async () => {
        const ws = await funded(1_000);
        const entry = await store.wallet.debit(ws, {
          amountPaise: 300,
          reference: 'frf_1',
          kind: 'flow_generation',
        });
        assert.equal(entry.amountPaise, -300);
        assert.equal(entry.balanceAfterPaise, 700);
        assert.equal(entry.description, 'Flow generation');
        assert.deepEqual(
          await store.wallet.debit(ws, { amountPaise: 300, reference: 'frf_1', kind: 'flow_generation' }),
          entry,
        );
        await store.wallet.hold(ws, { reference: 'call_h', amountPaise: 500, kind: 'call' });
        await assert.rejects(
          store.wallet.debit(ws, { amountPaise: 201, reference: 'tr_1', kind: 'transcription' }),
          InsufficientBalanceError,
        );
        assert.deepEqual(await balance(ws), { balancePaise: 700, heldPaise: 500, availablePaise: 200 });
        assert.equal((await entries(ws)).length, 2, 'the refused debit wrote nothing');
        const last = await store.wallet.debit(ws, {
          amountPaise: 200,
          reference: 'tr_1',
          kind: 'transcription',
        });
        assert.equal(last.balanceAfterPaise, 500);
        await assert.rejects(
          store.wallet.debit(ws, { amountPaise: 0, reference: 'z', kind: 'tts' }),
          RangeError,
        );
      });
    });

    describe('transactions', () => {
      it('pages newest first with after, and keeps workspaces apart', async () => {
        const ws = await funded(0);
        const ids: string[] = [];
        for (let i = 1; i <= 5; i++) {
          ids.push((await store.wallet.credit(ws, { amountPaise: i, reference: `pay_${i}` })).id);
        }
        const first = await store.wallet.transactions(ws, { limit: 3 });
        assert.deepEqual(
          first.items.map((e) => e.reference),
          ['pay_5', 'pay_4', 'pay_3'],
        );
        assert.equal(first.hasMore, true);
        const second = await store.wallet.transactions(ws, { limit: 3, after: first.items.at(-1)?.id ?? '' });
        assert.deepEqual(
          second.items.map((e) => e.id),
          [ids[1], ids[0]],
        );
        assert.equal(second.hasMore, false);
        const exact = await store.wallet.transactions(ws, { limit: 5 });
        assert.equal(exact.hasMore, false);

        const other = await funded(0);
        assert.deepEqual(await store.wallet.transactions(other, { limit: 10 }), {
          items: [],
          hasMore: false,
        });
      });

      it('treats another workspace hold as unknown', async () => {
        const ws = await funded(1_000);
        const other = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_t', amountPaise: 100, kind: 'call' });
        assert.equal(await store.wallet.getHold(other, 'call_t'), undefined);
        assert.equal(await store.wallet.release(other, 'call_t'), undefined);
        await assert.rejects(
          store.wallet.capture(other, { reference: 'call_t', amountPaise: 1 }),
          UnknownHoldError,
        );
        assert.deepEqual(await balance(other), { balancePaise: 1_000, heldPaise: 0, availablePaise: 1_000 });
        assert.equal((await store.wallet.getHold(ws, 'call_t'))?.status, 'held');
      });
    });

    describe('concurrency', () => {
      it('20 parallel holds against a balance for 7 never overdraw', async () => {
        const ws = await funded(700);
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            store.wallet.hold(ws, { reference: `call_p${i}`, amountPaise: 100, kind: 'call' }),
          ),
        );
        const held = results.filter((r) => r.status === 'fulfilled');
        const refused = results.filter((r) => r.status === 'rejected');
        assert.equal(held.length, 7);
        assert.equal(refused.length, 13);
        for (const r of refused) assert.ok(r.reason instanceof InsufficientBalanceError, String(r.reason));
        assert.deepEqual(await balance(ws), { balancePaise: 700, heldPaise: 700, availablePaise: 0 });
        const holdRows = (await target.rawRows('wallet_holds')).filter((r) => r['workspace_id'] === ws);
        assert.equal(holdRows.length, 7);

        await Promise.all(
          held.map((r) => store.wallet.capture(ws, { reference: r.value.reference, amountPaise: 100 })),
        );
        assert.deepEqual(await balance(ws), { balancePaise: 0, heldPaise: 0, availablePaise: 0 });
      });

      it('20 parallel debits against a balance for 7 never overdraw', async () => {
        const ws = await funded(700);
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            store.wallet.debit(ws, { amountPaise: 100, reference: `tts_${i}`, kind: 'tts' }),
          ),
        );
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 7);
        assert.deepEqual(await balance(ws), { balancePaise: 0, heldPaise: 0, availablePaise: 0 });
        assert.equal((await entries(ws)).length, 8);
      });

      it('parallel duplicates of one reference hold, debit, credit and capture once', async () => {
        const ws = await funded(10_000);
        const twelve = <T>(fn: () => Promise<T>) => Promise.all(Array.from({ length: 12 }, fn));
        const holds = await twelve(() =>
          store.wallet.hold(ws, { reference: 'call_dup', amountPaise: 900, kind: 'call' }),
        );
        assert.equal(new Set(holds.map((h) => h.createdAt)).size, 1);
        assert.deepEqual(await balance(ws), { balancePaise: 10_000, heldPaise: 900, availablePaise: 9_100 });
        const debits = await twelve(() =>
          store.wallet.debit(ws, { amountPaise: 50, reference: 'tts_dup', kind: 'tts' }),
        );
        assert.equal(new Set(debits.map((e) => e.id)).size, 1);
        const credits = await twelve(() => store.wallet.credit(ws, { amountPaise: 5, reference: 'pay_dup' }));
        assert.equal(new Set(credits.map((e) => e.id)).size, 1);
        await twelve(() => store.wallet.capture(ws, { reference: 'call_dup', amountPaise: 300 }));
        assert.deepEqual(await balance(ws), { balancePaise: 9_655, heldPaise: 0, availablePaise: 9_655 });
        assert.equal((await entries(ws)).length, 4, 'top-up, debit, credit, capture');
      });
    });

    describe('inside store.transaction', () => {
      it('rolls a capture back when the transaction throws after it', async () => {
        const ws = await funded(1_000);
        await store.wallet.hold(ws, { reference: 'call_tx', amountPaise: 600, kind: 'call' });
        await assert.rejects(
          store.transaction(async (repos) => {
            const captured = await repos.wallet.capture(ws, { reference: 'call_tx', amountPaise: 450 });
            assert.equal(captured.status, 'captured');
            assert.deepEqual(await repos.wallet.balance(ws), {
              balancePaise: 550,
              heldPaise: 0,
              availablePaise: 550,
            });
            throw new Error('call end failed');
          }),
          /call end failed/,
        );
        assert.equal((await store.wallet.getHold(ws, 'call_tx'))?.status, 'held');
        assert.deepEqual(await balance(ws), { balancePaise: 1_000, heldPaise: 600, availablePaise: 400 });
        assert.equal((await entries(ws)).length, 1);

        await store.transaction(async (repos) => {
          await repos.wallet.capture(ws, { reference: 'call_tx', amountPaise: 450 });
          await repos.wallet.debit(ws, { amountPaise: 50, reference: 'call_tx', kind: 'tts' });
        });
        assert.deepEqual(await balance(ws), { balancePaise: 500, heldPaise: 0, availablePaise: 500 });
        assert.equal((await entries(ws)).length, 3);
      });

      it('a refused hold inside a transaction leaves the transaction usable and writes nothing', async () => {
        const ws = await funded(100);
        const outcome = await store.transaction(async (repos) => {
          await repos.wallet.credit(ws, { amountPaise: 50, reference: 'pay_in_tx' });
          const refused = await repos.wallet
            .hold(ws, { reference: 'call_big', amountPaise: 1_000, kind: 'call' })
            .then(
              () => false,
              (error: unknown) => error instanceof InsufficientBalanceError,
            );
          return refused;
        });
        assert.equal(outcome, true);
        assert.equal(await store.wallet.getHold(ws, 'call_big'), undefined);
        assert.deepEqual(await balance(ws), { balancePaise: 150, heldPaise: 0, availablePaise: 150 });
      });
    });
  });
}
