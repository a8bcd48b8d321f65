/**
 * Number health at settlement on both stores: a pool's number whose answers fall below half its pool-mates'
 * median rests 45 minutes, and its third rest within a day makes it cooling until its owner resumes it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { newId } from '../ids.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { Store } from '../store/types.ts';
import { judgeNumberAfterCall } from './health.ts';
import { healthState, REST_MS } from './rules.ts';

const targets = await storeTargets('health');

for (const target of targets) {
  describe(`number health on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    it('rests a number that answers far less than its pool-mates, and cools it down on the third rest in a day', async () => {
      const ws = (await store.workspaces.create({ name: 'Acme', mode: 'sandbox' })).id;
      const agent = await store.agents.create(ws, { name: 'a' });
      const pool = await store.phonePools.create(ws, {
        name: 'P',
        purpose: 'outreach',
        maxPerHour: null,
        defaultForCampaigns: false,
      });
      const ids: string[] = [];
      for (const suffix of ['11', '12', '13']) {
        const created = await store.phoneNumbers.insert({
          id: newId('phoneNumber', clock.now()),
          workspaceId: ws,
          number: `+9180123456${suffix}`,
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
          paidUntil: null,
          renewsAt: null,
        });
        assert.ok(created !== 'exists');
        ids.push(created.id);
      }
      await store.phoneNumbers.setPool(ws, pool.id, ids);
      const [weak, mateA, mateB] = ids as [string, string, string];
      const callFrom = async (phoneNumberId: string, answered: boolean) => {
        const call = await store.calls.insert({
          id: newId('call', clock.now()),
          workspaceId: ws,
          agentId: agent.id,
          agentRevision: 1,
          channel: 'phone',
          toNumber: '+919812345678',
          fromNumber: null,
          tier: 't3',
          perMinPaise: 300,
          maxDurationSecs: 60,
          variables: {},
          webhookUrl: null,
          phoneNumberId,
          poolId: pool.id,
        });
        const now = clock.now();
        await store.calls.transition(ws, call.id, {
          from: ['queued'],
          to: answered ? 'completed' : 'no_answer',
          set: { endedAt: now, ...(answered ? { answeredAt: now } : {}) },
        });
        clock.advance(1);
        return { workspaceId: ws, phoneNumberId };
      };
      for (let i = 0; i < 10; i++) {
        await callFrom(mateA, i < 8);
        await callFrom(mateB, i < 6);
      }
      // 2 answers in 19 calls: not judged before 20.
      let last = await callFrom(weak, true);
      for (let i = 0; i < 18; i++) last = await callFrom(weak, i === 0);
      assert.equal(await judgeNumberAfterCall(store, last, clock.now()), undefined);
      last = await callFrom(weak, false);
      assert.deepEqual(await judgeNumberAfterCall(store, last, clock.now()), { id: weak, to: 'resting' });
      const rested = await store.phoneNumbers.get(ws, weak);
      assert.equal(rested && healthState(rested, clock.now()), 'resting');
      assert.equal(rested?.restingUntil, clock.now() + REST_MS);
      assert.equal(
        await judgeNumberAfterCall(store, last, clock.now()),
        undefined,
        'a resting number is left alone',
      );
      assert.equal(
        await judgeNumberAfterCall(store, { workspaceId: ws, phoneNumberId: mateA }, clock.now()),
        undefined,
      );

      clock.advance(REST_MS);
      last = await callFrom(weak, false);
      assert.deepEqual(await judgeNumberAfterCall(store, last, clock.now()), { id: weak, to: 'resting' });
      clock.advance(REST_MS);
      last = await callFrom(weak, false);
      assert.deepEqual(await judgeNumberAfterCall(store, last, clock.now()), { id: weak, to: 'cooling' });
      const cooled = await store.phoneNumbers.get(ws, weak);
      assert.equal(cooled && healthState(cooled, clock.now() + 10 * REST_MS), 'cooling');
      assert.equal(cooled?.version, 5, 'joined the pool, then three health changes');
    });
  });
}
