/**
 * Endings that race, run concurrently many times on SQLite and PostgreSQL (where two stores, like two
 * processes, race through separate connection pools): an abort against a hang-up, and four endings at once.
 * Each call ends exactly once, with exactly one terminal event matching its status, and the money is exact:
 * an aborted or failed call costs nothing, a completed or timed-out one its live seconds, never both, and
 * every hold is fully settled.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { isApiError } from '../errors.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { Store } from '../store/types.ts';
import { admitCall } from './admission.ts';
import { CallLifecycle } from './lifecycle.ts';
import { type EndTrigger, type TerminalStatus, terminalEventType } from './state-machine.ts';
import { fundedWorkspace } from './testing/workspaces.ts';

const targets = await storeTargets('race');
const ROUNDS = 6;
const CALLS_PER_ROUND = 5;
const START_PAISE = 1_000_000;

for (const target of targets) {
  describe(`racing settlements on ${target.name}`, () => {
    const clock = new ManualClock();
    let stores: Store[];
    let lifecycles: CallLifecycle[];

    before(async () => {
      // SQLite: one store per process is how it runs (one connection, transactions queue on it).
      stores =
        target.name === 'postgres'
          ? [await target.open(clock), await target.open(clock)]
          : [await target.open(clock)];
      lifecycles = stores.map((store) => new CallLifecycle({ store, clock }));
    });
    after(async () => {
      for (const store of stores) await store.close();
      await target.cleanup();
    });

    const lifecycleFor = (i: number) => lifecycles[i % lifecycles.length] as CallLifecycle;

    /** Runs `racers` against live calls, many at once; returns the expected balance from what each call became. */
    async function race(racers: EndTrigger[]) {
      const store = stores[0] as Store;
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, START_PAISE);
      let expectedCharges = 0;
      let aborts = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const calls = [];
        for (let i = 0; i < CALLS_PER_ROUND; i++) {
          const call = await admitCall(store, {
            workspaceId: ws,
            agentId,
            to: '+919812345678',
            webhookUrl: null,
          });
          await lifecycleFor(i).markDialing(ws, call.id);
          await lifecycleFor(i + 1).markAnswered(ws, call.id);
          calls.push(call);
        }
        const liveMs = 1_000 + round * 7_333;
        clock.advance(liveMs);
        const outcomes = await Promise.all(
          calls.map((call, i) => {
            const order = (round + i) % 2 === 0 ? racers : [...racers].reverse();
            return Promise.allSettled(
              order.map((trigger, k) =>
                trigger === 'abort'
                  ? lifecycleFor(i + k).abort(ws, call.id)
                  : lifecycleFor(i + k).settle(ws, call.id, trigger),
              ),
            );
          }),
        );
        for (const [i, call] of calls.entries()) {
          const results = outcomes[i] ?? [];
          for (const r of results) {
            if (r.status === 'rejected') {
              assert.ok(isApiError(r.reason) && r.reason.code === 'conflict', String(r.reason));
            }
          }
          const won = results.filter(
            (r) => r.status === 'fulfilled' && (!('settled' in r.value) || r.value.settled),
          );
          assert.equal(won.length, 1, 'exactly one racer ends the call');

          const ended = await store.calls.get(ws, call.id);
          assert.ok(ended);
          const status = ended.status as TerminalStatus;
          const terminal = (await store.events.listForCall(ws, call.id)).filter(
            (e) => e.type !== 'call.started',
          );
          assert.equal(terminal.length, 1, 'exactly one terminal event');
          assert.equal(terminal[0]?.type, terminalEventType(status));
          assert.equal(JSON.parse(terminal[0]?.body ?? '').data.call.status, status);

          const seconds = Math.ceil(liveMs / 1_000);
          const expected = status === 'completed' || status === 'timeout' ? Math.min(seconds * 5, 1_500) : 0;
          assert.equal(ended.costPaise, expected, `${status} after ${seconds} s`);
          const ledger = (await store.wallet.transactions(ws, { limit: 1_000 })).items.filter(
            (e) => e.reference === call.id,
          );
          assert.deepEqual(
            ledger.map((e) => e.amountPaise),
            expected > 0 ? [-expected] : [],
          );
          const hold = await store.wallet.getHold(ws, call.id);
          assert.notEqual(hold?.status, 'held');
          expectedCharges += expected;
          if (status === 'aborted') aborts++;
        }
      }
      assert.deepEqual(await store.wallet.balance(ws), {
        balancePaise: START_PAISE - expectedCharges,
        heldPaise: 0,
        availablePaise: START_PAISE - expectedCharges,
      });
      return { aborts, calls: ROUNDS * CALLS_PER_ROUND };
    }

    it('an abort racing a hang-up ends each call once: aborted free or completed billed', async () => {
      const { aborts, calls } = await race(['abort', 'customer_hangup']);
      assert.ok(aborts >= 0 && aborts <= calls);
    });

    it('four endings at once: one wins, one event, exact money', async () => {
      await race(['customer_hangup', 'abort', 'max_duration', 'pipeline_error']);
    });
  });
}
