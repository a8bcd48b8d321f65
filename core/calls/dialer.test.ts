/**
 * The dialer (queued -> dialing) on SQLite and PostgreSQL, each with the in-process coordinator and with Redis
 * (two coordinators on one Redis, as two worker nodes): FIFO per workspace, the live-call ceiling per
 * workspace, refusals and aborts, waking on released slots and admissions, two dialers at once, hang-up
 * commands, and ring outcomes. Leases, locks and store times follow a ManualClock; only waiting for the
 * started dialer's loop takes real time.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../clock.ts';
import type { Coordinator } from '../coord/index.ts';
import { coordinatorPairTargets } from '../coord/testing/node-pairs.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { admitCall } from './admission.ts';
import type { Carrier } from './carrier.ts';
import { announceQueued, sendCallCommand } from './control.ts';
import { Dialer, type DialerOptions, settleRingOutcomes } from './dialer.ts';
import { CallLifecycle } from './lifecycle.ts';
import { LiveCallSlots } from './live-slots.ts';
import { fundedWorkspace } from './testing/workspaces.ts';

const CASE_TIMEOUT_MS = 30_000;
/** A started dialer must be woken, never polled, within these tests. */
const NEVER_POLL_MS = 10 * 60_000;
const START_PAISE = 1_000_000;

/** A carrier that records what it is asked to do; it can refuse a call or hold one in `originate`. */
class RecordingCarrier implements Carrier {
  readonly originated: CallRecord[] = [];
  readonly hungUp: string[] = [];
  /** Runs inside `originate`, after the call is recorded. */
  onOriginate: ((call: CallRecord) => Promise<void> | void) | undefined;
  private refusals: string[] = [];

  constructor(readonly name = 'test-carrier') {}

  /** The next `originate` rejects with `reason`. */
  refuseNext(reason: string): void {
    this.refusals.push(reason);
  }

  async originate(call: CallRecord): Promise<{ carrierCallId: string }> {
    this.originated.push(call);
    await this.onOriginate?.(call);
    const refusal = this.refusals.shift();
    if (refusal !== undefined) throw new Error(refusal);
    return { carrierCallId: carrierCallIdOf(call.id) };
  }

  async hangup(carrierCallId: string): Promise<void> {
    this.hungUp.push(carrierCallId);
  }

  async close(): Promise<void> {}

  get originatedIds(): string[] {
    return this.originated.map((call) => call.id);
  }
}

const carrierCallIdOf = (callId: string) => `cc-${callId}`;

/** Aborts as the API does: ends the call, then tells the node with its carrier to hang up. Returns `hangUp`. */
async function abortAsTheApi(
  api: CallLifecycle,
  coord: Coordinator,
  workspaceId: string,
  callId: string,
): Promise<boolean> {
  const { call, hangUp } = await api.abort(workspaceId, callId);
  await sendCallCommand(coord, {
    type: 'hangup',
    workspaceId: call.workspaceId,
    callId: call.id,
    carrier: call.carrier,
    carrierCallId: call.carrierCallId,
  });
  return hangUp;
}

/** `store` whose calls repository runs `hook` right after `setCarrierCall` writes. */
function withCarrierRecordedHook(store: Store, hook: (callId: string) => Promise<void>): Store {
  const calls = new Proxy(store.calls, {
    get(target, property) {
      if (property !== 'setCarrierCall') return bound(target, property);
      const record: Store['calls']['setCarrierCall'] = async (workspaceId, id, carrier) => {
        const recorded = await target.setCarrierCall(workspaceId, id, carrier);
        await hook(id);
        return recorded;
      };
      return record;
    },
  });
  return new Proxy(store, {
    get: (target, property) => (property === 'calls' ? calls : bound(target, property)),
  });
}

function bound(target: object, property: string | symbol): unknown {
  const value: unknown = Reflect.get(target, property);
  return typeof value === 'function' ? value.bind(target) : value;
}

/** Polls `condition` in real time; fails with `what` if it does not hold within a few seconds. */
async function eventually(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

const coordinatorTargetList = await coordinatorPairTargets('dialertest');

after(async () => {
  for (const target of coordinatorTargetList) await target.cleanup();
});

for (const coordTarget of coordinatorTargetList) {
  // A database of its own per coordinator: each suite drops its database when done.
  for (const storeTarget of await storeTargets(`dialer_${coordTarget.name}`)) {
    describe(`dialer on ${storeTarget.name} with the ${coordTarget.name} coordinator`, () => {
      const clock = new ManualClock();
      /** Two stores on PostgreSQL (two nodes, two pools); SQLite runs one store per process. */
      let stores: [Store, Store];
      let coords: [Coordinator, Coordinator];
      let store: Store;
      let started: Dialer[];

      before(async () => {
        const first = await storeTarget.open(clock);
        stores = [first, storeTarget.name === 'postgres' ? await storeTarget.open(clock) : first];
        store = first;
      });
      after(async () => {
        for (const s of new Set(stores)) await s.close();
        await storeTarget.cleanup();
      });
      beforeEach(() => {
        coords = coordTarget.open(clock);
        started = [];
      });
      afterEach(async () => {
        for (const dialer of started) await dialer.stop();
        // Calls a case left queued must not reach the next case's dialers.
        const cleanup = new CallLifecycle({ store, clock });
        for (const ws of await store.calls.workspacesWithQueued()) {
          for (const call of await store.calls.nextQueued(ws, 500)) await cleanup.abort(ws, call.id);
        }
        for (const coord of new Set(coords)) await coord.close();
      });

      const test = (title: string, fn: () => Promise<void>) => it(title, { timeout: CASE_TIMEOUT_MS }, fn);

      /** Node `index` (0 or 1) of the deployment: its slots, its lifecycle (settling frees slots), a dialer. */
      const node = (
        index: 0 | 1,
        options: {
          ceiling?: number;
          carriers?: RecordingCarrier[];
          carrierFor?: DialerOptions['carrierFor'];
          whyNoCarrier?: DialerOptions['whyNoCarrier'];
          fleetRoom?: DialerOptions['fleetRoom'];
          /** Runs right after the dialer records a call's carrier id, before it goes on. */
          afterCarrierRecorded?: (callId: string) => Promise<void>;
        } = {},
      ) => {
        const coord = coords[index];
        const nodeStore = options.afterCarrierRecorded
          ? withCarrierRecordedHook(stores[index] as Store, options.afterCarrierRecorded)
          : stores[index];
        const slots = new LiveCallSlots(coord, options.ceiling ?? 3);
        const lifecycle = new CallLifecycle({ store: nodeStore, clock, slots });
        const carriers = options.carriers ?? [new RecordingCarrier()];
        const carrier = carriers[0] as RecordingCarrier;
        const errors: unknown[] = [];
        const dialer = new Dialer({
          store: nodeStore,
          coord,
          lifecycle,
          slots,
          carriers,
          carrierFor: options.carrierFor ?? (async () => carrier),
          ...(options.whyNoCarrier ? { whyNoCarrier: options.whyNoCarrier } : {}),
          ...(options.fleetRoom ? { fleetRoom: options.fleetRoom } : {}),
          pollMs: NEVER_POLL_MS,
          reportError: (error) => errors.push(error),
          clock,
        });
        const start = async () => {
          await dialer.start();
          started.push(dialer);
        };
        return { coord, slots, lifecycle, carrier, dialer, errors, start };
      };

      const admit = async (ws: { workspaceId: string; agentId: string }, count: number) => {
        const calls: CallRecord[] = [];
        for (let i = 0; i < count; i++) {
          calls.push(await admitCall(store, { ...ws, to: '+919812345678', webhookUrl: null }));
        }
        return calls;
      };
      const statusOf = async (call: CallRecord) => (await store.calls.get(call.workspaceId, call.id))?.status;
      const idsOf = (calls: CallRecord[]) => calls.map((call) => call.id);
      const holdersOf = async (slots: LiveCallSlots, workspaceId: string) =>
        [...(await slots.holders(workspaceId))].sort();

      test('dials no more calls than the gateways have room for, across workspaces; the rest wait queued', async () => {
        const first = await fundedWorkspace(store, START_PAISE);
        const second = await fundedWorkspace(store, START_PAISE);
        const calls = [...(await admit(first, 2)), ...(await admit(second, 2))];
        let room: number | undefined = 1;
        const a = node(0, { ceiling: 3, fleetRoom: async () => room });

        assert.equal(await a.dialer.pass(), 1, 'room for one call');
        assert.equal(a.carrier.originated.length, 1);
        room = 0;
        assert.equal(await a.dialer.pass(), 0, 'a full fleet dials nothing');
        room = 2;
        assert.equal(await a.dialer.pass(), 2);
        assert.equal(a.carrier.originated.length, 3);
        const queued = [];
        for (const call of calls) if ((await statusOf(call)) === 'queued') queued.push(call.id);
        assert.equal(queued.length, 1, 'one call still waits, queued and unbilled');
        room = undefined;
        assert.equal(await a.dialer.pass(), 1, 'no gateway publishing a capacity holds nothing back');
        assert.equal(a.carrier.originated.length, 4);
        // Each workspace's own calls still left in order.
        for (const ws of [first, second]) {
          const mine = a.carrier.originated.filter((call) => call.workspaceId === ws.workspaceId);
          assert.deepEqual(idsOf(mine), idsOf(calls.filter((call) => call.workspaceId === ws.workspaceId)));
        }
      });

      test('dials a workspace oldest first up to the ceiling; the rest wait queued until a slot frees', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const calls = await admit(ws, 5);
        const a = node(0, { ceiling: 3 });

        assert.equal(await a.dialer.pass(), 3);
        assert.deepEqual(a.carrier.originatedIds, idsOf(calls.slice(0, 3)));
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), idsOf(calls.slice(0, 3)).sort());
        for (const call of calls.slice(0, 3)) {
          const dialing = await store.calls.get(ws.workspaceId, call.id);
          assert.equal(dialing?.status, 'dialing');
          assert.equal(dialing?.dialingAt, clock.now());
          assert.equal(dialing?.carrier, 'test-carrier');
          assert.equal(dialing?.carrierCallId, carrierCallIdOf(call.id));
        }
        assert.deepEqual(
          await Promise.all(calls.slice(3).map(statusOf)),
          ['queued', 'queued'],
          'never refused, only kept waiting',
        );

        assert.equal(await a.dialer.pass(), 0, 'no slot: the oldest waits and so do the younger ones');
        assert.equal(await store.calls.countLive(ws.workspaceId), 3);

        const [, second, , , last] = calls as [CallRecord, CallRecord, CallRecord, CallRecord, CallRecord];
        await settleRingOutcomes(a.lifecycle)({ workspaceId: ws.workspaceId, callId: second.id }, 'busy');
        assert.equal(await a.dialer.pass(), 1);
        assert.deepEqual(a.carrier.originatedIds, idsOf(calls.slice(0, 4)));
        assert.equal(await statusOf(last), 'queued');
        assert.equal(await store.calls.countLive(ws.workspaceId), 3);
        assert.deepEqual(a.errors, []);
      });

      it('after the coordinator lost its state, gives the live calls their slots back before dialling more', {
        timeout: CASE_TIMEOUT_MS,
        skip: !coordTarget.loseState && 'the in-process coordinator loses its state only with its holders',
      }, async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const calls = await admit(ws, 5);
        const a = node(0, { ceiling: 3 });
        assert.equal(await a.dialer.pass(), 3);

        await coordTarget.loseState?.();
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), []);
        const b = node(1, { ceiling: 3 });
        assert.equal(await b.dialer.pass(), 0, 'the three live calls still fill the ceiling');
        assert.deepEqual(await holdersOf(b.slots, ws.workspaceId), idsOf(calls.slice(0, 3)).sort());
        assert.equal(await a.dialer.pass(), 0);
        assert.equal(await store.calls.countLive(ws.workspaceId), 3);

        const [first] = calls as [CallRecord];
        await settleRingOutcomes(b.lifecycle)({ workspaceId: ws.workspaceId, callId: first.id }, 'busy');
        assert.equal(await a.dialer.pass(), 1, 'and the queue moves on as a live call ends');
        assert.equal(await store.calls.countLive(ws.workspaceId), 3);
        assert.deepEqual([...a.errors, ...b.errors], []);
      });

      test('gives every workspace a ceiling of its own', async () => {
        const one = await fundedWorkspace(store, START_PAISE);
        const two = await fundedWorkspace(store, START_PAISE);
        const oneCalls = (await admit(one, 3)) as [CallRecord, CallRecord, CallRecord];
        const twoCalls = (await admit(two, 3)) as [CallRecord, CallRecord, CallRecord];
        const a = node(0, { ceiling: 2 });

        assert.equal(await a.dialer.pass(), 4);
        assert.deepEqual(await holdersOf(a.slots, one.workspaceId), idsOf(oneCalls.slice(0, 2)).sort());
        assert.deepEqual(await holdersOf(a.slots, two.workspaceId), idsOf(twoCalls.slice(0, 2)).sort());
        assert.equal(await statusOf(oneCalls[2]), 'queued');
        assert.equal(await statusOf(twoCalls[2]), 'queued');

        await a.lifecycle.settle(one.workspaceId, oneCalls[0].id, 'busy');
        assert.equal(await a.dialer.pass(), 1, 'a slot freed in one workspace serves only that workspace');
        assert.equal(await statusOf(oneCalls[2]), 'dialing');
        assert.equal(await statusOf(twoCalls[2]), 'queued');
      });

      test('ends a call the carrier refuses failed and free, releasing its hold and its slot', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [refused, next] = (await admit(ws, 2)) as [CallRecord, CallRecord];
        const a = node(0, { ceiling: 1 });
        a.carrier.refuseNext('number unreachable');

        assert.equal(await a.dialer.pass(), 0);
        assert.equal(await a.dialer.pass(), 1, 'the freed slot lets the next call go');
        assert.deepEqual(a.carrier.originatedIds, [refused.id, next.id]);
        const ended = await store.calls.get(ws.workspaceId, refused.id);
        assert.equal(ended?.status, 'failed');
        assert.equal(ended?.endedReason, 'pipeline-error');
        assert.match(ended?.error ?? '', /the carrier refused the call: number unreachable/);
        assert.equal(ended?.costPaise, 0);
        assert.equal((await store.wallet.getHold(ws.workspaceId, refused.id))?.status, 'released');
        const nextHold = (await store.wallet.getHold(ws.workspaceId, next.id))?.amountPaise ?? 0;
        assert.deepEqual(await store.wallet.balance(ws.workspaceId), {
          balancePaise: START_PAISE,
          heldPaise: nextHold,
          availablePaise: START_PAISE - nextHold,
        });
        assert.deepEqual(
          (await store.events.listForCall(ws.workspaceId, refused.id)).map((e) => e.type),
          ['call.failed'],
        );
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), [next.id]);
      });

      test('frees the slot of a refused call itself, even when its lifecycle does not release slots', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [refused, next] = (await admit(ws, 2)) as [CallRecord, CallRecord];
        const slots = new LiveCallSlots(coords[0], 1);
        const carrier = new RecordingCarrier();
        carrier.refuseNext('busy trunk');
        const dialer = new Dialer({
          store,
          coord: coords[0],
          lifecycle: new CallLifecycle({ store, clock }),
          slots,
          carriers: [carrier],
          carrierFor: async () => carrier,
        });
        assert.equal(await dialer.pass(), 0);
        assert.equal(await statusOf(refused), 'failed');
        assert.deepEqual(await holdersOf(slots, ws.workspaceId), []);
        assert.equal(await dialer.pass(), 1);
        assert.deepEqual(await holdersOf(slots, ws.workspaceId), [next.id]);
      });

      test('ends a call failed when its workspace has no carrier, without dialling it', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [call] = (await admit(ws, 1)) as [CallRecord];
        const a = node(0, { ceiling: 1, carrierFor: async () => undefined });
        assert.equal(await a.dialer.pass(), 0);
        const ended = await store.calls.get(ws.workspaceId, call.id);
        assert.equal(ended?.status, 'failed');
        assert.match(ended?.error ?? '', /no carrier/);
        assert.equal((await store.wallet.balance(ws.workspaceId)).heldPaise, 0);
        assert.deepEqual(a.carrier.originated, []);
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), []);
      });

      test('a call without a carrier keeps the reason the node gives: the settings that are missing', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [call] = (await admit(ws, 1)) as [CallRecord];
        const a = node(0, {
          carrierFor: async () => undefined,
          whyNoCarrier: (c) => `production calls need a carrier account (${c.id})`,
        });
        await a.dialer.pass();
        const ended = await store.calls.get(ws.workspaceId, call.id);
        assert.equal(ended?.error, `production calls need a carrier account (${call.id})`);
      });

      test('skips calls aborted while they waited, never originating them', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [early, late, kept] = (await admit(ws, 3)) as [CallRecord, CallRecord, CallRecord];
        const api = new CallLifecycle({ store, clock });
        await api.abort(ws.workspaceId, early.id);
        const a = node(0, {
          ceiling: 2,
          // The abort lands after the dialer picked the call and took its slot, before it marks it dialing.
          carrierFor: async (call) => {
            if (call.id === late.id) await api.abort(ws.workspaceId, late.id);
            return a.carrier;
          },
        });
        assert.equal(await a.dialer.pass(), 1);
        assert.deepEqual(a.carrier.originatedIds, [kept.id]);
        assert.equal(await statusOf(early), 'aborted');
        assert.equal(await statusOf(late), 'aborted');
        assert.deepEqual(
          await holdersOf(a.slots, ws.workspaceId),
          [kept.id],
          'the aborted call’s slot is free',
        );
        assert.equal(
          (await store.wallet.balance(ws.workspaceId)).heldPaise,
          (await store.wallet.getHold(ws.workspaceId, kept.id))?.amountPaise,
        );
      });

      test('a call aborted while the carrier rings it is hung up once, by the dialer, and its slot freed', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [call] = (await admit(ws, 1)) as [CallRecord];
        const api = new CallLifecycle({ store, clock });
        const a = node(0, { ceiling: 1 });
        // The abort lands after the carrier took the call and before its id is recorded: the API has no id to
        // name in its hang-up command, so hanging up is the dialer's.
        a.carrier.onOriginate = async (ringing) => {
          await abortAsTheApi(api, a.coord, ws.workspaceId, ringing.id);
        };
        await a.start();
        await eventually('the carrier is told to hang up', () => a.carrier.hungUp.length === 1);
        await sleep(50);
        assert.deepEqual(a.carrier.hungUp, [carrierCallIdOf(call.id)]);
        assert.equal(await statusOf(call), 'aborted');
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), []);
      });

      test('a call aborted just after its carrier id is recorded is hung up once, through the command', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [call] = (await admit(ws, 1)) as [CallRecord];
        const api = new CallLifecycle({ store, clock });
        const a = node(0, {
          ceiling: 1,
          afterCarrierRecorded: (callId) =>
            abortAsTheApi(api, a.coord, ws.workspaceId, callId).then(() => {}),
        });
        await a.start();
        await eventually('the carrier is told to hang up', () => a.carrier.hungUp.length === 1);
        await sleep(50);
        assert.deepEqual(a.carrier.hungUp, [carrierCallIdOf(call.id)]);
        await eventually(
          'the slot is freed',
          async () => (await holdersOf(a.slots, ws.workspaceId)).length === 0,
        );
      });

      test('a workspace whose dialling fails does not hold up the others', async () => {
        const broken = await fundedWorkspace(store, START_PAISE);
        const healthy = await fundedWorkspace(store, START_PAISE);
        const [stuck] = (await admit(broken, 1)) as [CallRecord];
        const [fine] = (await admit(healthy, 1)) as [CallRecord];
        const a = node(0, {
          carrierFor: async (call) => {
            if (call.workspaceId === broken.workspaceId) throw new Error('workspace settings unreadable');
            return a.carrier;
          },
        });
        assert.equal(await a.dialer.pass(), 1);
        assert.deepEqual(a.carrier.originatedIds, [fine.id]);
        assert.equal(a.errors.length, 1);
        assert.match(String(a.errors[0]), /workspace settings unreadable/);
        assert.equal(await statusOf(stuck), 'queued', 'tried again on a later pass');
        assert.deepEqual(await holdersOf(a.slots, broken.workspaceId), []);
      });

      test('a started dialer goes on when a slot is released, a ringing call is aborted, or a call is admitted', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const [first, second, third] = (await admit(ws, 3)) as [CallRecord, CallRecord, CallRecord];
        // The dialer runs on one node; slots are released and calls admitted through the other.
        const worker = node(1, { ceiling: 1 });
        const other = node(0, { ceiling: 1 });
        await worker.start();
        await eventually('the first call is dialled', () => worker.carrier.originated.length === 1);
        await sleep(50);
        assert.deepEqual(worker.carrier.originatedIds, [first.id], 'the ceiling holds the others back');

        await settleRingOutcomes(other.lifecycle)({ workspaceId: ws.workspaceId, callId: first.id }, 'busy');
        await eventually('the released slot wakes the dialer', () => worker.carrier.originated.length === 2);
        assert.deepEqual(worker.carrier.originatedIds, [first.id, second.id]);

        // The API aborts with a lifecycle that holds no slots and tells the node with the carrier to hang up.
        const api = new CallLifecycle({ store, clock });
        assert.equal(await abortAsTheApi(api, other.coord, ws.workspaceId, second.id), true);
        await eventually(
          'the aborted call’s slot frees for the next',
          () => worker.carrier.originated.length === 3,
        );
        assert.deepEqual(worker.carrier.hungUp, [carrierCallIdOf(second.id)]);
        assert.deepEqual(worker.carrier.originatedIds, [first.id, second.id, third.id]);

        await other.lifecycle.settle(ws.workspaceId, third.id, 'busy');
        await sleep(50);
        const [fourth] = (await admit(ws, 1)) as [CallRecord];
        announceQueued(other.coord)();
        await eventually('an admission wakes the dialer', () => worker.carrier.originated.length === 4);
        assert.equal(worker.carrier.originated[3]?.id, fourth.id);
        assert.deepEqual(worker.errors, []);
      });

      test('two dialers together never exceed the ceiling and never dial a call twice', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const carrier = new RecordingCarrier();
        const a = node(0, { ceiling: 3, carriers: [carrier] });
        const b = node(1, { ceiling: 3, carriers: [carrier] });

        // Passes racing on a full queue: exactly the ceiling goes, each call once.
        const burst = await admit(ws, 5);
        const dialled = await Promise.all([
          a.dialer.pass(),
          b.dialer.pass(),
          a.dialer.pass(),
          b.dialer.pass(),
        ]);
        assert.equal(
          dialled.reduce((sum, n) => sum + n, 0),
          3,
        );
        assert.deepEqual(carrier.originatedIds, idsOf(burst.slice(0, 3)));
        for (const call of burst.slice(0, 3)) await a.lifecycle.settle(ws.workspaceId, call.id, 'busy');
        for (const call of burst.slice(3)) await a.lifecycle.abort(ws.workspaceId, call.id);
        carrier.originated.length = 0;

        // Both started, draining a queue while calls end at random moments.
        const calls = await admit(ws, 12);
        let maxLive = 0;
        carrier.onOriginate = async (call) => {
          maxLive = Math.max(maxLive, await store.calls.countLive(call.workspaceId));
          const ending = [a, b][Math.floor(Math.random() * 2)] as typeof a;
          setTimeout(
            () => {
              void settleRingOutcomes(ending.lifecycle)(
                { workspaceId: call.workspaceId, callId: call.id },
                'busy',
              );
            },
            Math.floor(Math.random() * 20),
          );
        };
        await Promise.all([a.start(), b.start()]);
        await eventually('every call is dialled', () => carrier.originated.length >= calls.length);
        await eventually(
          'every call has ended',
          async () => (await store.calls.countOpen(ws.workspaceId)) === 0,
        );
        assert.deepEqual(carrier.originatedIds, idsOf(calls), 'each call once, in admission order');
        assert.ok(maxLive <= 3, `at most 3 live at once, saw ${maxLive}`);
        assert.deepEqual(
          await Promise.all(calls.map(statusOf)),
          calls.map(() => 'busy'),
        );
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), []);
        assert.deepEqual([...a.errors, ...b.errors], []);
      });

      test('a dialer that lost its workspace lock leaves the rest of the queue to the dialer that took it', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const calls = await admit(ws, 3);
        const carrier = new RecordingCarrier();
        const a = node(0, { ceiling: 3, carriers: [carrier] });
        const b = node(1, { ceiling: 3, carriers: [carrier] });
        let resume: () => void = () => {};
        const held = new Promise<void>((resolve) => {
          resume = resolve;
        });
        // The carrier takes longer than the workspace lock lives to accept the first call.
        carrier.onOriginate = async () => {
          carrier.onOriginate = undefined;
          await held;
        };
        const slow = a.dialer.pass();
        await eventually('the first call reaches the carrier', () => carrier.originated.length === 1);
        clock.advance(15_001);
        assert.equal(await b.dialer.pass(), 2);
        resume();
        assert.equal(await slow, 1);
        assert.deepEqual(carrier.originatedIds, idsOf(calls));
        assert.deepEqual(
          await holdersOf(a.slots, ws.workspaceId),
          idsOf(calls).sort(),
          'no live call lost its slot',
        );
        assert.deepEqual(await Promise.all(calls.map(statusOf)), ['dialing', 'dialing', 'dialing']);
      });

      test('passes hang-up commands to the carrier they name, and only to it', async () => {
        const sandbox = new RecordingCarrier('sandbox');
        const trunk = new RecordingCarrier('trunk');
        const worker = node(1, { carriers: [sandbox, trunk] });
        await worker.start();
        const hangup = (carrier: string | null, carrierCallId: string | null) =>
          sendCallCommand(coords[0], {
            type: 'hangup',
            workspaceId: 'ws_none',
            callId: 'call_none',
            carrier,
            carrierCallId,
          });
        await hangup('elsewhere', 'cc-elsewhere');
        await hangup('trunk', null);
        await hangup(null, 'cc-nobody');
        await hangup('trunk', 'cc-trunk-1');
        await hangup('sandbox', 'cc-sandbox-1');
        await eventually(
          'both carriers hang up',
          () => sandbox.hungUp.length === 1 && trunk.hungUp.length === 1,
        );
        await sleep(50);
        assert.deepEqual(sandbox.hungUp, ['cc-sandbox-1']);
        assert.deepEqual(trunk.hungUp, ['cc-trunk-1']);
        assert.deepEqual(worker.errors, []);
      });

      test('settles ring outcomes: busy -> busy, ring timeout -> no_answer, carrier failure -> failed', async () => {
        const ws = await fundedWorkspace(store, START_PAISE);
        const a = node(0, { ceiling: 3 });
        const calls = (await admit(ws, 3)) as [CallRecord, CallRecord, CallRecord];
        assert.equal(await a.dialer.pass(), 3);
        const report = settleRingOutcomes(a.lifecycle);
        await report({ workspaceId: ws.workspaceId, callId: calls[0].id }, 'busy');
        await report({ workspaceId: ws.workspaceId, callId: calls[1].id }, 'ring_timeout');
        await report({ workspaceId: ws.workspaceId, callId: calls[2].id }, 'carrier_failed', 'SIP 503');
        const ended = await Promise.all(calls.map((call) => store.calls.get(ws.workspaceId, call.id)));
        assert.deepEqual(
          ended.map((call) => [call?.status, call?.endedReason]),
          [
            ['busy', 'customer-busy'],
            ['no_answer', 'customer-did-not-answer'],
            ['failed', 'pipeline-error'],
          ],
        );
        assert.equal(ended[2]?.error, 'SIP 503');
        assert.ok(ended.every((call) => call?.costPaise === 0));
        for (const call of calls) {
          assert.deepEqual(
            (await store.events.listForCall(ws.workspaceId, call.id)).map((e) => e.type),
            ['call.failed'],
          );
        }
        assert.equal((await store.wallet.balance(ws.workspaceId)).heldPaise, 0);
        assert.deepEqual(await holdersOf(a.slots, ws.workspaceId), []);
        await report({ workspaceId: ws.workspaceId, callId: calls[0].id }, 'ring_timeout');
        assert.equal(await statusOf(calls[0]), 'busy', 'a second report changes nothing');
      });
    });
  }
}
