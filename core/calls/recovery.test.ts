/**
 * Call recovery on SQLite and PostgreSQL, each with the in-process coordinator and with Redis (two
 * coordinators on one Redis, as two worker nodes): a live call whose slot lease ran out ends `failed` exactly
 * once however many sweep, a call ringing past the deadline ends `no_answer`, and calls whose slot is held (or
 * that are too young to judge) are left alone. Store, coordinator and recovery share a ManualClock, so leases
 * run out and calls age without waiting.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../clock.ts';
import type { Coordinator, Unsubscribe } from '../coord/index.ts';
import { coordinatorPairTargets } from '../coord/testing/node-pairs.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { admitCall } from './admission.ts';
import { type CallCommand, onCallCommand } from './control.ts';
import { CallLifecycle } from './lifecycle.ts';
import { LiveCallSlots } from './live-slots.ts';
import { CallRecovery, webJoinDeadline } from './recovery.ts';
import { fundedWorkspace } from './testing/workspaces.ts';

const CASE_TIMEOUT_MS = 30_000;
const START_PAISE = 1_000_000;
/** Recovery judges a call by its slot only after this long live (recovery.ts). */
const SLOT_GRACE_MS = 10_000;
/** Room for clocks on top of a lease before a young coordinator state's missing slots count (live-slots.ts). */
const CLOCK_MARGIN_MS = 10_000;
const SHORT_LEASE_MS = 200;
/** The lease of a holder that keeps renewing (a gateway running media, a dialer's ringing call). */
const KEPT_LEASE_MS = 60 * 60_000;
const RING_DEADLINE_MS = 30_000;

const coordinatorTargetList = await coordinatorPairTargets('recoverytest');

after(async () => {
  for (const target of coordinatorTargetList) await target.cleanup();
});

for (const coordTarget of coordinatorTargetList) {
  // A database of its own per coordinator: each suite drops its database when done.
  for (const storeTarget of await storeTargets(`recovery_${coordTarget.name}`)) {
    describe(`call recovery on ${storeTarget.name} with the ${coordTarget.name} coordinator`, () => {
      const clock = new ManualClock();
      /** Two stores on PostgreSQL (two nodes, two pools); SQLite runs one store per process. */
      let stores: [Store, Store];
      let coords: [Coordinator, Coordinator];
      let store: Store;
      let commands: CallCommand[];
      let unsubscribe: Unsubscribe;

      before(async () => {
        const first = await storeTarget.open(clock);
        stores = [first, storeTarget.name === 'postgres' ? await storeTarget.open(clock) : first];
        store = first;
      });
      after(async () => {
        for (const s of new Set(stores)) await s.close();
        await storeTarget.cleanup();
      });
      beforeEach(async () => {
        coords = coordTarget.open(clock);
        // A running deployment's coordinator state has been there for longer than a lease.
        await coords[0].stateSince();
        clock.advance(SHORT_LEASE_MS + CLOCK_MARGIN_MS + 1);
        commands = [];
        unsubscribe = await onCallCommand(coords[1], (command) => commands.push(command));
      });
      afterEach(async () => {
        // A case's live calls must not outlive its coordinator: the next case's sweeps would find them slotless.
        const cleanup = new CallLifecycle({ store, clock });
        for (const call of await store.calls.liveOlderThan(0)) {
          await cleanup.settle(call.workspaceId, call.id, 'abort');
        }
        await unsubscribe();
        for (const coord of new Set(coords)) await coord.close();
      });

      const test = (title: string, fn: () => Promise<void>) => it(title, { timeout: CASE_TIMEOUT_MS }, fn);

      /** Node `index` (0 or 1): its short-lease slots, its lifecycle (settling frees slots), its recovery. */
      const node = (index: 0 | 1) => {
        const slots = new LiveCallSlots(coords[index], 5, SHORT_LEASE_MS);
        const lifecycle = new CallLifecycle({ store: stores[index], clock, slots });
        const recovery = new CallRecovery({
          store: stores[index],
          coord: coords[index],
          lifecycle,
          slots,
          ringDeadlineMs: RING_DEADLINE_MS,
          clock,
        });
        return { slots, lifecycle, recovery };
      };

      /** A call dialled as the dialer does it (slot first, then dialing), optionally answered. */
      const liveCall = async (
        ws: { workspaceId: string; agentId: string },
        stage: 'dialing' | 'in_progress',
        leaseMs: number,
      ): Promise<CallRecord> => {
        const call = await admitCall(store, { ...ws, to: '+919812345678', webhookUrl: null });
        const slots = new LiveCallSlots(coords[0], 5, leaseMs);
        assert.ok(await slots.acquire(ws.workspaceId, call.id));
        const lifecycle = new CallLifecycle({ store, clock });
        assert.ok(await lifecycle.markDialing(ws.workspaceId, call.id, { carrier: 'test-carrier' }));
        await store.calls.setCarrierCall(ws.workspaceId, call.id, {
          carrier: 'test-carrier',
          carrierCallId: `cc-${call.id}`,
        });
        if (stage === 'in_progress') assert.ok(await lifecycle.markAnswered(ws.workspaceId, call.id));
        return (await store.calls.get(ws.workspaceId, call.id)) as CallRecord;
      };
      const callNow = async (call: CallRecord) => store.calls.get(call.workspaceId, call.id);
      const eventTypes = async (call: CallRecord) =>
        (await store.events.listForCall(call.workspaceId, call.id)).map((e) => e.type);
      const idsOf = (calls: CallRecord[]) => calls.map((call) => call.id).sort();
      /** Hang-up commands seen so far, by call id. */
      const hungUp = () =>
        commands
          .filter((command) => command.type === 'hangup')
          .map((command) => [command.callId, command.carrier, command.carrierCallId]);
      const eventuallyHungUp = async (count: number) => {
        const deadline = Date.now() + 5_000;
        while (hungUp().length < count) {
          if (Date.now() > deadline)
            assert.fail(`expected ${count} hang-up commands, saw ${hungUp().length}`);
          await sleep(5);
        }
      };

      test('ends each call whose lease ran out failed, free and exactly once, however many sweep', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const talking = await liveCall(ws, 'in_progress', SHORT_LEASE_MS);
        const ringing = await liveCall(ws, 'dialing', SHORT_LEASE_MS);
        const lateReport = await liveCall(ws, 'in_progress', SHORT_LEASE_MS);
        const [one, two] = [node(0), node(1)];
        clock.advance(SLOT_GRACE_MS + 1);
        assert.deepEqual([...(await one.slots.holders(ws.workspaceId))], [], 'every lease ran out');

        const [first, second, third, gateway] = await Promise.all([
          one.recovery.sweep(),
          two.recovery.sweep(),
          one.recovery.sweep(),
          // The gateway of one call reports its hang-up just as the sweepers run.
          two.lifecycle.settle(ws.workspaceId, lateReport.id, 'customer_hangup'),
        ]);
        const ended = [...first, ...second, ...third];
        const expected = gateway.settled ? [talking, ringing] : [talking, ringing, lateReport];
        assert.deepEqual(idsOf(ended), idsOf(expected), 'each call ended by one sweeper only');
        assert.deepEqual(
          await Promise.all([one.recovery.sweep(), two.recovery.sweep()]),
          [[], []],
          'nothing left to end',
        );

        for (const call of expected) {
          const now = await callNow(call);
          assert.equal(now?.status, 'failed');
          assert.equal(now?.endedReason, 'pipeline-error');
          assert.match(now?.error ?? '', /lease ran out/);
          assert.equal(now?.costPaise, 0, 'a platform failure is free');
          assert.equal((await store.wallet.getHold(ws.workspaceId, call.id))?.status, 'released');
          const terminal = (await eventTypes(call)).filter((type) => type !== 'call.started');
          assert.deepEqual(terminal, ['call.failed'], 'one terminal event');
          const late = await one.lifecycle.settle(ws.workspaceId, call.id, 'customer_hangup');
          assert.equal(late.settled, false, 'a gateway reporting late changes nothing');
        }
        if (gateway.settled) {
          assert.equal((await callNow(lateReport))?.status, 'completed');
          assert.deepEqual(
            (await eventTypes(lateReport)).filter((type) => type !== 'call.started'),
            ['call.completed'],
          );
        }
        const balance = await store.wallet.balance(ws.workspaceId);
        assert.equal(balance.heldPaise, 0);
        assert.equal(balance.balancePaise, START_PAISE - ((await callNow(lateReport))?.costPaise ?? 0));

        await eventuallyHungUp(expected.length);
        assert.deepEqual(
          hungUp().sort(),
          expected.map((call) => [call.id, 'test-carrier', `cc-${call.id}`]).sort(),
          'the carrier is told to stop each call recovery ended',
        );
      });

      it('after the coordinator lost its state, ends only the calls whose node did not re-assert their slot within a lease', {
        timeout: CASE_TIMEOUT_MS,
        skip: !coordTarget.loseState && 'the in-process coordinator loses its state only with its holders',
      }, async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const talking = await liveCall(ws, 'in_progress', SHORT_LEASE_MS);
        const orphaned = await liveCall(ws, 'in_progress', SHORT_LEASE_MS);
        await coordTarget.loseState?.();
        const { slots, recovery } = node(0);
        clock.advance(SLOT_GRACE_MS + 1);
        assert.deepEqual([...(await slots.holders(ws.workspaceId))], []);
        assert.deepEqual(await recovery.sweep(), [], 'no slot is evidence yet: nobody had time to re-assert');

        assert.equal(
          await slots.keep(ws.workspaceId, talking.id),
          false,
          'its gateway re-asserts the lost slot',
        );
        clock.advance(SHORT_LEASE_MS / 2);
        assert.equal(await slots.keep(ws.workspaceId, talking.id), true, 'and renews it as ever');
        clock.advance(SHORT_LEASE_MS / 2 + CLOCK_MARGIN_MS - 100);
        assert.equal(await slots.keep(ws.workspaceId, talking.id), false);
        assert.deepEqual(await recovery.sweep(), [], 'within a lease and the clock margin of the loss');
        clock.advance(101);
        assert.equal(await slots.keep(ws.workspaceId, talking.id), true);
        assert.deepEqual(idsOf(await recovery.sweep()), [orphaned.id]);
        assert.equal((await callNow(talking))?.status, 'in_progress');
        assert.equal((await callNow(orphaned))?.status, 'failed');
      });

      test('ends a call ringing past the deadline no_answer while its slot is still held', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const ringing = await liveCall(ws, 'dialing', KEPT_LEASE_MS);
        const talking = await liveCall(ws, 'in_progress', KEPT_LEASE_MS);
        const { slots, recovery } = node(0);

        clock.advance(RING_DEADLINE_MS);
        assert.deepEqual(await recovery.sweep(), [], 'at the deadline, not past it');
        clock.advance(1);
        assert.deepEqual(idsOf(await recovery.sweep()), [ringing.id]);

        const ended = await callNow(ringing);
        assert.equal(ended?.status, 'no_answer');
        assert.equal(ended?.endedReason, 'customer-did-not-answer');
        assert.match(ended?.error ?? '', /ring deadline/);
        assert.equal(ended?.costPaise, 0);
        assert.deepEqual(await eventTypes(ringing), ['call.failed']);
        assert.equal((await store.wallet.getHold(ws.workspaceId, ringing.id))?.status, 'released');
        assert.deepEqual([...(await slots.holders(ws.workspaceId))], [talking.id], 'its slot is free again');
        assert.equal((await callNow(talking))?.status, 'in_progress', 'a call with media does not ring out');

        await eventuallyHungUp(1);
        assert.deepEqual(hungUp(), [[ringing.id, 'test-carrier', `cc-${ringing.id}`]]);
        assert.deepEqual(await recovery.sweep(), []);
        assert.deepEqual(await eventTypes(ringing), ['call.failed'], 'still one terminal event');
      });

      test('a web call waits for its browser past the ring deadline, its slot kept, until its join token expires', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const joinWindowMs = 5 * RING_DEADLINE_MS;
        const leaseMs = RING_DEADLINE_MS;
        const slots = new LiveCallSlots(coords[0], 5, leaseMs);
        const lifecycle = new CallLifecycle({ store, clock, slots });
        const recovery = new CallRecovery({
          store,
          coord: coords[0],
          lifecycle,
          slots,
          ringDeadlineMs: RING_DEADLINE_MS,
          webJoinWindowMs: joinWindowMs,
          clock,
        });
        const web = await admitCall(store, { ...ws, channel: 'web', webhookUrl: null });
        assert.ok(await slots.acquire(ws.workspaceId, web.id));
        assert.ok(await lifecycle.markDialing(ws.workspaceId, web.id, { carrier: 'web' }));
        const deadline = webJoinDeadline(web, joinWindowMs);

        // Sweeps a third of a lease apart, as the worker runs them: the slot never runs out while it waits.
        const step = leaseMs / 3;
        while (clock.now() + step <= deadline) {
          clock.advance(step);
          assert.deepEqual(await recovery.sweep(), [], `still waiting ${clock.now() - web.createdAt} ms in`);
          assert.equal((await callNow(web))?.status, 'dialing');
          assert.ok((await slots.holders(ws.workspaceId)).has(web.id), 'its slot is renewed meanwhile');
        }
        assert.ok(clock.now() - web.createdAt > RING_DEADLINE_MS, 'past the ring deadline of a phone call');
        clock.set(deadline);
        assert.deepEqual(await recovery.sweep(), [], 'at the token expiry, not past it');
        clock.advance(1);
        assert.deepEqual(idsOf(await recovery.sweep()), [web.id]);

        const ended = await callNow(web);
        assert.equal(ended?.status, 'no_answer');
        assert.equal(ended?.endedReason, 'customer-did-not-answer');
        assert.match(ended?.error ?? '', /join token expired/);
        assert.equal(ended?.costPaise, 0);
        assert.deepEqual(await eventTypes(web), ['call.failed']);
        assert.ok(!(await slots.holders(ws.workspaceId)).has(web.id), 'its slot is free again');
      });

      test('leaves alone calls whose slot is held, queued calls, and calls too young to judge', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const queued = await admitCall(store, { ...ws, to: '+919812345678', webhookUrl: null });
        const talking = await liveCall(ws, 'in_progress', KEPT_LEASE_MS);
        const ringing = await liveCall(ws, 'dialing', KEPT_LEASE_MS);
        clock.advance(SLOT_GRACE_MS / 2);
        const young = await liveCall(ws, 'in_progress', SHORT_LEASE_MS);
        const { slots, recovery } = node(1);

        clock.advance(SLOT_GRACE_MS / 2 + 1);
        assert.ok(!(await slots.holders(ws.workspaceId)).has(young.id), 'its lease ran out already');
        assert.deepEqual(await recovery.sweep(), [], 'held, queued or too young');
        assert.equal((await callNow(talking))?.status, 'in_progress');
        assert.equal((await callNow(ringing))?.status, 'dialing');
        assert.equal((await callNow(young))?.status, 'in_progress');
        assert.equal((await callNow(queued))?.status, 'queued');

        clock.advance(SLOT_GRACE_MS / 2);
        assert.deepEqual(idsOf(await recovery.sweep()), [young.id], 'old enough to judge by its slot');
        assert.equal((await callNow(young))?.status, 'failed');
        for (const call of [talking, ringing]) {
          assert.deepEqual(
            (await eventTypes(call)).filter((type) => type !== 'call.started'),
            [],
          );
        }
        assert.deepEqual(
          [...(await slots.holders(ws.workspaceId))].sort(),
          idsOf([talking, ringing]),
          'their slots are untouched',
        );
        await eventuallyHungUp(1);
        assert.deepEqual(
          hungUp().map(([callId]) => callId),
          [young.id],
        );
      });
    });
  }
}
