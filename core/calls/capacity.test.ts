/**
 * A gateway node's admission limit (pure rule and its default) and the fleet's published capacity, on the
 * in-process coordinator with a manual clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { MemoryCoordinator } from '../coord/memory.ts';
import type { PhoneNumberRecord, Store } from '../store/types.ts';
import {
  CALL_CPU_MS_PER_SECOND,
  defaultMaxCalls,
  EventLoopLag,
  type LoopLag,
  NodeAdmission,
} from './capacity.ts';
import { CAPACITY_LEASE_MS, GatewayFleet } from './fleet.ts';
import { IncomingCalls } from './incoming.ts';
import { LiveCallSlots } from './live-slots.ts';

describe('defaultMaxCalls', () => {
  it('plans 70% of 1.2 cores at the measured cost of a call', () => {
    assert.equal(CALL_CPU_MS_PER_SECOND, 10);
    assert.equal(defaultMaxCalls(1), 70);
    assert.equal(defaultMaxCalls(2), 84);
    // One process uses its JavaScript thread whatever the machine has.
    assert.equal(defaultMaxCalls(64), 84);
    assert.equal(defaultMaxCalls(2, 20), 42);
    assert.equal(defaultMaxCalls(1, 10_000), 1, 'never below one call');
    assert.throws(() => defaultMaxCalls(0), RangeError);
  });
});

describe('NodeAdmission', () => {
  it('admits up to its limit, counting the calls still starting', () => {
    const admission = new NodeAdmission({ maxCalls: 3 });
    assert.equal(admission.refusal(0), undefined);
    assert.equal(admission.refusal(2), undefined);
    assert.equal(admission.refusal(3), 'max_calls');
    assert.equal(admission.refusal(7), 'max_calls');
    assert.equal(admission.capacity(1), 3);
    assert.throws(() => new NodeAdmission({ maxCalls: 0 }), RangeError);
  });

  it('takes no new call while the event loop runs late, and publishes only what it has then', () => {
    let lag = 0;
    const reading: LoopLag = { lagMs: () => lag };
    const admission = new NodeAdmission({ maxCalls: 10, maxLoopLagMs: 100, lag: reading });
    assert.equal(admission.refusal(4), undefined);
    lag = 150;
    assert.equal(admission.refusal(4), 'loop_lag');
    assert.equal(admission.capacity(4), 4);
    assert.equal(admission.refusal(10), 'max_calls', 'the limit is named first');
    lag = 100;
    assert.equal(admission.refusal(4), undefined, 'at the bound is not late');
    assert.equal(admission.capacity(4), 10);
    assert.throws(() => new NodeAdmission({ maxCalls: 1, maxLoopLagMs: 5 }), RangeError);
  });
});

describe('GatewayFleet capacity', () => {
  it('sums what each node publishes, follows changes, and forgets a node that stops renewing', async () => {
    const clock = new ManualClock(1_000_000);
    const coord = new MemoryCoordinator({ clock });
    const fleet = new GatewayFleet(coord);
    assert.equal(await fleet.capacity(), undefined, 'nobody publishes: no bound');
    let a = 4;
    const leaveA = await fleet.join('node-a', undefined, { capacity: () => a });
    const leaveB = await fleet.join('node-b', undefined, { capacity: () => 6 });
    const leaveC = await fleet.join('node-c');
    assert.equal(await fleet.size(), 3);
    assert.equal(await fleet.capacity(), 10, 'a node that publishes nothing adds nothing');
    a = 2;
    // The renewal publishes the new figure (real timers: the renewal runs every second).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal(await fleet.capacity(), 8);
    await leaveB();
    assert.equal(await fleet.capacity(), 2);
    await leaveC();
    // A node that died stops renewing: its capacity lapses with its short lease.
    clock.advance(CAPACITY_LEASE_MS + 1);
    assert.equal(await fleet.capacity(), undefined);
    await leaveA();
    await coord.close();
  });

  it('refuses a node id that cannot be told apart from its figure', async () => {
    const fleet = new GatewayFleet(new MemoryCoordinator({ clock: new ManualClock(0) }));
    await assert.rejects(fleet.join('a|b', undefined, { capacity: () => 1 }), RangeError);
  });
});

describe('incoming calls while the fleet is full', () => {
  it('are answered with the busy message before any slot, hold or call is made', async () => {
    const coord = new MemoryCoordinator({ clock: new ManualClock(0) });
    const slots = new LiveCallSlots(coord);
    const untouchable = new Proxy(
      {},
      {
        get() {
          throw new Error('the store was used for a call there is no room for');
        },
      },
    ) as Store;
    let room = 0;
    const incoming = new IncomingCalls({ store: untouchable, slots, fleetRoom: async () => room });
    const number = { id: 'pn_1', workspaceId: 'ws_1', number: '+918000000001', agentId: 'ag_1' };
    const verdict = await incoming.admit({
      number: number as PhoneNumberRecord,
      from: '+919812300001',
      carrier: 'sandbox',
      carrierCallId: 'CA1',
    });
    assert.deepEqual(verdict, { kind: 'busy', reason: 'no media gateway has room for another call' });
    assert.equal((await slots.holders('ws_1')).size, 0);
    room = 1;
    await assert.rejects(
      incoming.admit({
        number: number as PhoneNumberRecord,
        from: '+919812300001',
        carrier: 'sandbox',
        carrierCallId: 'CA2',
      }),
      /the store was used/,
      'with room, admission goes on to the store',
    );
    await coord.close();
  });
});

describe('EventLoopLag', () => {
  it('reads a blocked event loop as late, and a free one as on time', async () => {
    const lag = new EventLoopLag(200);
    try {
      await new Promise((resolve) => setTimeout(resolve, 450));
      const before = lag.lagMs();
      const until = Date.now() + 250;
      while (Date.now() < until) {
        // Busy: nothing else runs on the loop for 250 ms.
      }
      // The stall shows in the window that saw it, for one window.
      let seen = 0;
      for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = Math.max(seen, lag.lagMs());
      }
      assert.ok(seen >= 150, `a 250 ms stall reads ${seen} ms late`);
      assert.ok(before < 150, `an idle loop read ${before} ms late`);
    } finally {
      lag.stop();
    }
  });
});
