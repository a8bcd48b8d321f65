/**
 * The telephony repositories on SQLite and PostgreSQL: a number held once per workspace, versioned changes,
 * pool membership, release at the end of the paid period, call statistics per number, and quotes used once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { newId } from '../ids.ts';
import { storeTargets } from './testing/targets.ts';
import type { NewPhoneNumber, Store } from './types.ts';

const targets = await storeTargets('telephony');

for (const target of targets) {
  describe(`telephony store on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    const workspace = async () => (await store.workspaces.create({ name: 'Acme', mode: 'sandbox' })).id;
    const number = (workspaceId: string, n: string, extra: Partial<NewPhoneNumber> = {}): NewPhoneNumber => ({
      id: newId('phoneNumber', clock.now()),
      workspaceId,
      number: n,
      ownership: 'managed',
      provider: 'sandbox',
      providerRef: `ref-${n}`,
      state: 'imported',
      setupError: null,
      agentId: null,
      incomingEnabled: false,
      poolId: null,
      health: 'active',
      warmingUntil: clock.now() + 1000,
      paidUntil: clock.now() + 10_000,
      renewsAt: clock.now() + 10_000,
      ...extra,
    });

    it('holds a number once per workspace; another workspace sees none of it', async () => {
      const ws = await workspace();
      const other = await workspace();
      const created = await store.phoneNumbers.insert(number(ws, '+918012345601'));
      assert.notEqual(created, 'exists');
      assert.equal(await store.phoneNumbers.insert(number(ws, '+918012345601')), 'exists');
      assert.notEqual(await store.phoneNumbers.insert(number(other, '+918012345601')), 'exists');
      if (created === 'exists') return;
      assert.equal(created.version, 1);
      assert.deepEqual(await store.phoneNumbers.get(ws, created.id), created);
      assert.equal(await store.phoneNumbers.get(other, created.id), undefined);
      assert.deepEqual(await store.phoneNumbers.held(ws), ['+918012345601']);
      const racing = await Promise.all([
        store.phoneNumbers.insert(number(ws, '+918012345609')),
        store.phoneNumbers.insert(number(ws, '+918012345609')),
      ]);
      assert.equal(racing.filter((r) => r === 'exists').length, 1, 'two rents at once: one number');
    });

    it('changes raise the version; a stale version is a conflict and writes nothing', async () => {
      const ws = await workspace();
      const created = await store.phoneNumbers.insert(number(ws, '+918012345602'));
      assert.notEqual(created, 'exists');
      if (created === 'exists') return;
      const changed = await store.phoneNumbers.change(ws, created.id, {
        version: 1,
        change: () => ({ agentId: 'agt_x', health: 'resting', restingUntil: 5, rests: [1, 2] }),
      });
      assert.ok(typeof changed === 'object');
      assert.deepEqual(
        [changed.version, changed.agentId, changed.restingUntil, changed.rests],
        [2, 'agt_x', 5, [1, 2]],
      );
      assert.equal(
        await store.phoneNumbers.change(ws, created.id, { version: 1, change: () => ({ agentId: null }) }),
        'conflict',
      );
      assert.equal((await store.phoneNumbers.get(ws, created.id))?.agentId, 'agt_x');
      assert.equal(await store.phoneNumbers.change(ws, 'pn_missing', { change: () => ({}) }), 'not_found');
    });

    it('sets pool membership, each join and leave a change, and releases a number after its paid period', async () => {
      const ws = await workspace();
      const a = await store.phoneNumbers.insert(number(ws, '+918012345603'));
      const b = await store.phoneNumbers.insert(number(ws, '+918012345604'));
      assert.ok(a !== 'exists' && b !== 'exists');
      const pool = await store.phonePools.create(ws, {
        name: 'P',
        purpose: 'support',
        maxPerHour: null,
        defaultForCampaigns: false,
      });
      await store.phoneNumbers.setPool(ws, pool.id, [a.id, b.id]);
      assert.deepEqual(
        (await store.phoneNumbers.inPool(ws, pool.id)).map((n) => n.id).sort(),
        [a.id, b.id].sort(),
      );
      await store.phoneNumbers.setPool(ws, pool.id, [b.id]);
      const [left, stayed] = await Promise.all([
        store.phoneNumbers.get(ws, a.id),
        store.phoneNumbers.get(ws, b.id),
      ]);
      assert.deepEqual([left?.poolId, left?.version, stayed?.poolId, stayed?.version], [null, 3, pool.id, 2]);

      await store.phoneNumbers.change(ws, a.id, {
        change: () => ({ releasesAt: clock.now() + 100, renewsAt: null }),
      });
      assert.ok(await store.phoneNumbers.get(ws, a.id));
      clock.advance(100);
      assert.equal(await store.phoneNumbers.get(ws, a.id), undefined);
      assert.deepEqual(
        (await store.phoneNumbers.list(ws, { limit: 10 })).items.map((n) => n.id),
        [b.id],
      );
    });

    it('counts attempts and answers per number since a time', async () => {
      const ws = await workspace();
      const agent = await store.agents.create(ws, { name: 'a' });
      const n = await store.phoneNumbers.insert(number(ws, '+918012345605'));
      assert.ok(n !== 'exists');
      for (const answered of [true, false, true]) {
        const call = await store.calls.insert({
          id: newId('call', clock.now()),
          workspaceId: ws,
          agentId: agent.id,
          agentRevision: 1,
          channel: 'phone',
          toNumber: '+919812345678',
          fromNumber: n.number,
          tier: 't3',
          perMinPaise: 300,
          maxDurationSecs: 60,
          variables: {},
          webhookUrl: null,
          phoneNumberId: n.id,
          poolId: null,
        });
        if (answered) {
          await store.calls.transition(ws, call.id, {
            from: ['queued'],
            to: 'in_progress',
            set: { answeredAt: clock.now() },
          });
        }
      }
      const stats = await store.phoneNumbers.callStats(ws, [n.id, 'pn_none'], clock.now() - 1);
      assert.deepEqual(stats.get(n.id), { attempts: 3, answers: 2 });
      assert.equal(stats.get('pn_none'), undefined);
      assert.equal((await store.phoneNumbers.callStats(ws, [n.id], clock.now() + 1)).size, 0);
    });

    it('uses a quote once; keeps the latest submission and its review', async () => {
      const ws = await workspace();
      const quote = await store.telephony.insertQuote({
        id: newId('quote', clock.now()),
        workspaceId: ws,
        number: '+918012345606',
        amountPaise: 150_000,
        periodMonths: 3,
        createdAt: clock.now(),
        expiresAt: clock.now() + 1000,
      });
      const [first, second] = await Promise.all([
        store.telephony.useQuote(ws, quote.id),
        store.telephony.useQuote(ws, quote.id),
      ]);
      assert.deepEqual([first, second].sort(), [false, true]);
      const submission = await store.telephony.insertSubmission({
        id: newId('submission', clock.now()),
        workspaceId: ws,
        provider: 'sandbox',
        providerRef: 'r',
        status: 'pending',
        reasons: [],
        content: { business: { name: 'Acme' } },
        createdAt: clock.now(),
      });
      const reviewed = await store.telephony.setReview(ws, submission.id, {
        status: 'rejected',
        reasons: ['no'],
      });
      assert.deepEqual(
        [reviewed?.status, reviewed?.reasons, reviewed?.reviewedAt],
        ['rejected', ['no'], clock.now()],
      );
      assert.deepEqual(await store.telephony.latestSubmission(ws), reviewed);
    });
  });
}
