/**
 * Renewals on both stores with a controllable clock: one charge per period however many sweeps run at once or
 * again after a restart, daily retries while the wallet cannot pay, release after seven days of them, and the
 * release of a deleted number at the end of its paid period.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { newId } from '../ids.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { Store } from '../store/types.ts';
import { NumberRenewals, RENEWAL_GRACE_DAYS } from './renewals.ts';
import { addMonths, DAY_MS, RENTAL } from './rules.ts';
import { SandboxTelephony } from './sandbox.ts';

const targets = await storeTargets('renewals');
const silent = { info: () => undefined, warn: () => undefined };

for (const target of targets) {
  describe(`number renewals on ${target.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 31, 9));
    let store: Store;
    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    const renewals = () =>
      new NumberRenewals({ store, providers: { sandbox: new SandboxTelephony() }, logger: silent, clock });
    /** One sweep's outcomes for one number (the sweep covers every workspace's numbers). */
    const sweepFor = async (id: string) => (await renewals().sweep()).filter((o) => o.id === id);

    async function rented(balancePaise: number, suffix: string) {
      const ws = (await store.workspaces.create({ name: 'Acme', mode: 'sandbox' })).id;
      if (balancePaise > 0)
        await store.wallet.credit(ws, { amountPaise: balancePaise, reference: `top-${suffix}` });
      const paidUntil = addMonths(clock.now(), 3);
      const n = await store.phoneNumbers.insert({
        id: newId('phoneNumber', clock.now()),
        workspaceId: ws,
        number: `+9180123457${suffix}`,
        ownership: 'managed',
        provider: 'sandbox',
        providerRef: suffix,
        state: 'imported',
        setupError: null,
        agentId: null,
        incomingEnabled: false,
        poolId: null,
        health: 'active',
        warmingUntil: clock.now(),
        paidUntil,
        renewsAt: paidUntil,
      });
      assert.ok(n !== 'exists');
      return { ws, n };
    }

    it('charges each period once, whatever runs at once or again', async () => {
      const { ws, n } = await rented(2 * RENTAL.periodPaise, '01');
      assert.deepEqual(await sweepFor(n.id), [], 'nothing due before the paid period ends');
      clock.set(n.paidUntil as number);
      const [a, b] = await Promise.all([renewals().sweep(), renewals().sweep()]);
      const renewed = [...a, ...b].filter((o) => o.id === n.id);
      assert.equal(renewed.length, 1);
      const next = addMonths(n.paidUntil as number, 3);
      assert.deepEqual(renewed[0], { id: n.id, outcome: 'renewed', paidUntil: next });
      assert.deepEqual(await sweepFor(n.id), []);
      const after = await store.phoneNumbers.get(ws, n.id);
      assert.deepEqual([after?.paidUntil, after?.renewsAt], [next, next]);
      const ledger = (await store.wallet.transactions(ws, { limit: 10 })).items.filter(
        (e) => e.kind === 'number_rental',
      );
      assert.equal(ledger.length, 1);
      assert.equal(ledger[0]?.amountPaise, -RENTAL.periodPaise);
      assert.equal((await store.wallet.balance(ws)).balancePaise, RENTAL.periodPaise);
    });

    it('retries daily while the wallet cannot pay, then releases the number after seven days', async () => {
      const { ws, n } = await rented(1_000, '02');
      const due = n.paidUntil as number;
      clock.set(due);
      assert.deepEqual(await sweepFor(n.id), [{ id: n.id, outcome: 'retry', renewsAt: due + DAY_MS }]);
      for (let day = 1; day < RENEWAL_GRACE_DAYS; day++) {
        clock.set(due + day * DAY_MS);
        const [outcome] = await sweepFor(n.id);
        assert.equal(outcome?.outcome, 'retry', `day ${day}`);
      }
      assert.ok(await store.phoneNumbers.get(ws, n.id), 'still held during the grace days');
      clock.set(due + RENEWAL_GRACE_DAYS * DAY_MS);
      assert.deepEqual(await sweepFor(n.id), [{ id: n.id, outcome: 'released' }]);
      assert.equal(await store.phoneNumbers.get(ws, n.id), undefined);
      assert.equal((await store.wallet.balance(ws)).balancePaise, 1_000, 'nothing charged');
    });

    it('releases a deleted number at the end of its paid period, and never renews it', async () => {
      const { ws, n } = await rented(10 * RENTAL.periodPaise, '03');
      await store.phoneNumbers.change(ws, n.id, {
        change: () => ({ renewsAt: null, releasesAt: n.paidUntil }),
      });
      clock.set(n.paidUntil as number);
      assert.deepEqual(await sweepFor(n.id), [{ id: n.id, outcome: 'released' }]);
      assert.deepEqual(await store.phoneNumbers.held(ws), []);
      assert.equal((await store.wallet.balance(ws)).balancePaise, 10 * RENTAL.periodPaise);
    });
  });
}
