/**
 * The coordinator conformance suite: the same cases against the in-process coordinator always, and against
 * Redis when REDIS_URL is set (then also two coordinators sharing one Redis). Time is a ManualClock handed to
 * the coordinators, so every lease, TTL, window and refill is exact; no case sleeps.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisServer, redisServerAvailable } from '../../test/support/redis-server.ts';
import { ManualClock } from '../clock.ts';
import { redisUrl, uniqueName } from '../testing/services.ts';
import {
  type ConnectionChange,
  type Coordinator,
  createCoordinator,
  MemoryCoordinator,
  RedisCoordinator,
  type ReportError,
} from './index.ts';
import { CoordinatorUnavailableError } from './unavailable.ts';

/** Guards against a hang (a message that never arrives); no case depends on it. */
const CASE_TIMEOUT_MS = 10_000;
const HOUR_MS = 3_600_000;

type MakeCoordinator = (clock: ManualClock, reportError: ReportError) => Coordinator;

/** A subscriber's handler that records messages and lets a test wait for the n-th. */
function inbox() {
  const messages: string[] = [];
  let waiters: Array<() => void> = [];
  return {
    messages,
    handler: (message: string) => {
      messages.push(message);
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    async until(count: number): Promise<void> {
      while (messages.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** Takes tokens until the bucket refuses; returns how many it gave. */
async function drain(coord: Coordinator, key: string, ratePerSec: number, burst: number): Promise<number> {
  let allowed = 0;
  while ((await coord.rateLimit(key, ratePerSec, burst)).allowed) {
    allowed++;
    assert.ok(allowed <= burst, 'a bucket never gives more than burst at one instant');
  }
  return allowed;
}

function conformance(name: string, make: MakeCoordinator): void {
  describe(name, () => {
    let clock: ManualClock;
    let coord: Coordinator;
    let reported: unknown[];

    beforeEach(() => {
      clock = new ManualClock();
      reported = [];
      coord = make(clock, (error) => reported.push(error));
    });
    afterEach(() => coord.close());

    const test = (title: string, fn: () => Promise<void>) => it(title, { timeout: CASE_TIMEOUT_MS }, fn);

    describe('rate limits (token bucket)', () => {
      test('over an interval it allows exactly burst + floor(rate * elapsed)', async () => {
        const cases = [
          { ratePerSec: 3, burst: 5, stepMs: 70, steps: 35 },
          { ratePerSec: 10, burst: 20, stepMs: 33, steps: 40 },
          { ratePerSec: 4, burst: 2, stepMs: 100, steps: 10 },
          { ratePerSec: 0.5, burst: 1, stepMs: 250, steps: 19 },
        ];
        for (const { ratePerSec, burst, stepMs, steps } of cases) {
          const key = `interval-${ratePerSec}-${burst}`;
          let allowed = await drain(coord, key, ratePerSec, burst);
          for (let step = 0; step < steps; step++) {
            clock.advance(stepMs);
            allowed += await drain(coord, key, ratePerSec, burst);
          }
          const elapsedMs = stepMs * steps;
          assert.equal(allowed, burst + Math.floor((ratePerSec * elapsedMs) / 1000), `rate ${ratePerSec}`);
        }
      });

      test('remaining counts down and retryAfterMs is exactly the wait for the next token', async () => {
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: true, remaining: 1 });
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: true, remaining: 0 });
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: false, retryAfterMs: 250 });
        clock.advance(100);
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: false, retryAfterMs: 150 });
        clock.advance(149);
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: false, retryAfterMs: 1 });
        clock.advance(1);
        assert.deepEqual(await coord.rateLimit('api', 4, 2), { allowed: true, remaining: 0 });
      });

      test('waiting retryAfterMs always suffices and one millisecond less never does', async () => {
        for (const ratePerSec of [3, 7, 0.3]) {
          const key = `retry-${ratePerSec}`;
          await drain(coord, key, ratePerSec, 1);
          for (let round = 0; round < 3; round++) {
            const refused = await coord.rateLimit(key, ratePerSec, 1);
            assert.equal(refused.allowed, false);
            if (refused.allowed) return;
            clock.advance(refused.retryAfterMs - 1);
            assert.equal((await coord.rateLimit(key, ratePerSec, 1)).allowed, false, `rate ${ratePerSec}`);
            clock.advance(1);
            assert.equal((await coord.rateLimit(key, ratePerSec, 1)).allowed, true, `rate ${ratePerSec}`);
          }
        }
      });

      test('a bucket refills to burst and no further, and keys are independent', async () => {
        assert.equal(await drain(coord, 'a', 10, 20), 20);
        assert.deepEqual(await coord.rateLimit('b', 10, 20), { allowed: true, remaining: 19 });
        clock.advance(HOUR_MS);
        assert.equal(await drain(coord, 'a', 10, 20), 20);
      });

      test('refuses a rate or burst it cannot honour', async () => {
        await assert.rejects(coord.rateLimit('k', 0, 5), RangeError);
        await assert.rejects(coord.rateLimit('k', 10, 0), RangeError);
        await assert.rejects(coord.rateLimit('k', 10, 1.5), RangeError);
        await assert.rejects(coord.rateLimit('k', Number.NaN, 5), RangeError);
      });
    });

    describe('slots with leases', () => {
      test('the ceiling is respected', async () => {
        assert.equal(await coord.slots.acquire('ws_1', 2, 'call_a', 60_000), true);
        assert.equal(await coord.slots.acquire('ws_1', 2, 'call_b', 60_000), true);
        assert.equal(await coord.slots.acquire('ws_1', 2, 'call_c', 60_000), false);
        assert.deepEqual(await coord.slots.holders('ws_1'), ['call_a', 'call_b']);
        assert.equal(await coord.slots.acquire('ws_2', 2, 'call_c', 60_000), true, 'scopes are independent');
        assert.equal(
          await coord.slots.acquire('ws_3', 0, 'call_d', 60_000),
          false,
          'ceiling 0 admits nobody',
        );
      });

      test('re-acquiring by the same holder takes no second slot and renews its lease', async () => {
        assert.equal(await coord.slots.acquire('ws', 2, 'call_a', 1_000), true);
        clock.advance(900);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_a', 1_000), true);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_b', 1_000), true);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_c', 1_000), false);
        clock.advance(900);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_a', 'call_b']);
      });

      test('release frees the slot, and releasing what is not held does nothing', async () => {
        await coord.slots.acquire('ws', 1, 'call_a', 60_000);
        assert.equal(await coord.slots.acquire('ws', 1, 'call_b', 60_000), false);
        await coord.slots.release('ws', 'call_a');
        await coord.slots.release('ws', 'call_a');
        await coord.slots.release('ws', 'call_nobody');
        assert.equal(await coord.slots.acquire('ws', 1, 'call_b', 60_000), true);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_b']);
      });

      test('an expired lease frees its slot at its deadline', async () => {
        await coord.slots.acquire('ws', 2, 'call_a', 1_000);
        await coord.slots.acquire('ws', 2, 'call_b', 5_000);
        clock.advance(999);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_c', 1_000), false);
        clock.advance(1);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_b']);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_c', 1_000), true);
      });

      test('renew extends a live lease and fails after expiry', async () => {
        await coord.slots.acquire('ws', 1, 'call_a', 1_000);
        clock.advance(900);
        assert.equal(await coord.slots.renew('ws', 'call_a', 1_000), true);
        clock.advance(900);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_a']);
        clock.advance(100);
        assert.equal(await coord.slots.renew('ws', 'call_a', 1_000), false);
        assert.deepEqual(await coord.slots.holders('ws'), []);
        assert.equal(await coord.slots.renew('ws', 'call_never', 1_000), false);
      });

      test('hold re-asserts a slot whatever the ceiling, and its lease then runs as any other', async () => {
        await coord.slots.acquire('ws', 1, 'call_a', 1_000);
        await coord.slots.hold('ws', 'call_b', 2_000);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_a', 'call_b']);
        assert.equal(await coord.slots.acquire('ws', 2, 'call_c', 1_000), false, 'held slots count');
        await coord.slots.hold('ws', 'call_a', 3_000);
        clock.advance(2_000);
        assert.deepEqual(await coord.slots.holders('ws'), ['call_a']);
        assert.equal(await coord.slots.renew('ws', 'call_a', 1_000), true);
        await assert.rejects(coord.slots.hold('ws', 'call_a', 0), RangeError);
      });

      test('refuses a negative ceiling or an empty lease', async () => {
        await assert.rejects(coord.slots.acquire('ws', -1, 'call_a', 1_000), RangeError);
        await assert.rejects(coord.slots.acquire('ws', 1, 'call_a', 0), RangeError);
        await assert.rejects(coord.slots.renew('ws', 'call_a', -5), RangeError);
      });
    });

    describe('fixed-window counters', () => {
      test('count within a window and reset in the next', async () => {
        assert.equal(await coord.counters.get('pace:+911', HOUR_MS), 0);
        assert.equal(await coord.counters.incr('pace:+911', HOUR_MS), 1);
        assert.equal(await coord.counters.incr('pace:+911', HOUR_MS), 2);
        clock.advance(HOUR_MS - 1);
        assert.equal(await coord.counters.incr('pace:+911', HOUR_MS), 3);
        assert.equal(await coord.counters.get('pace:+911', HOUR_MS), 3);
        clock.advance(1);
        assert.equal(await coord.counters.get('pace:+911', HOUR_MS), 0);
        assert.equal(await coord.counters.incr('pace:+911', HOUR_MS), 1);
      });

      test('keys and window lengths count separately', async () => {
        await coord.counters.incr('a', HOUR_MS);
        await coord.counters.incr('a', 60_000);
        await coord.counters.incr('a', 60_000);
        assert.equal(await coord.counters.get('a', HOUR_MS), 1);
        assert.equal(await coord.counters.get('a', 60_000), 2);
        assert.equal(await coord.counters.get('b', HOUR_MS), 0);
        await assert.rejects(coord.counters.incr('a', 0), RangeError);
      });
    });

    describe('tallies (least-counted member under its limit)', () => {
      const pool = [
        { member: 'pn_a', limit: 2 },
        { member: 'pn_b', limit: 3 },
      ];
      test('take the least counted, ties to the earlier, never past a limit, reset in the next window', async () => {
        const taken: string[] = [];
        for (let i = 0; i < 5; i++)
          taken.push((await coord.tallies.take('ws_1', HOUR_MS, pool))?.member ?? '-');
        assert.deepEqual(taken, ['pn_a', 'pn_b', 'pn_a', 'pn_b', 'pn_b']);
        assert.equal(await coord.tallies.take('ws_1', HOUR_MS, pool), null);
        assert.deepEqual(await coord.tallies.read('ws_1', HOUR_MS, ['pn_b', 'pn_a', 'pn_c']), [3, 2, 0]);
        clock.advance(HOUR_MS);
        assert.deepEqual(await coord.tallies.read('ws_1', HOUR_MS, ['pn_a', 'pn_b']), [0, 0]);
        const next = await coord.tallies.take('ws_1', HOUR_MS, pool);
        assert.deepEqual(next, {
          member: 'pn_a',
          count: 1,
          windowStart: Math.floor(clock.now() / HOUR_MS) * HOUR_MS,
        });
      });

      test('a count given back frees its place, in the window it was taken in only', async () => {
        const first = await coord.tallies.take('ws_2', HOUR_MS, [{ member: 'pn_a', limit: 1 }]);
        assert.ok(first);
        assert.equal(await coord.tallies.take('ws_2', HOUR_MS, [{ member: 'pn_a', limit: 1 }]), null);
        await coord.tallies.giveBack('ws_2', HOUR_MS, first.windowStart, 'pn_a');
        await coord.tallies.giveBack('ws_2', HOUR_MS, first.windowStart, 'pn_a');
        assert.deepEqual(await coord.tallies.read('ws_2', HOUR_MS, ['pn_a']), [0]);
        assert.equal((await coord.tallies.take('ws_2', HOUR_MS, [{ member: 'pn_a', limit: 1 }]))?.count, 1);
        await assert.rejects(coord.tallies.take('ws_2', HOUR_MS, [{ member: 'x', limit: -1 }]), RangeError);
        assert.equal(await coord.tallies.take('ws_2', HOUR_MS, []), null);
      });

      test('concurrent takes never pass a limit', async () => {
        const members = Array.from({ length: 5 }, (_, i) => ({ member: `pn_${i}`, limit: 4 }));
        const results = await Promise.all(
          Array.from({ length: 30 }, () => coord.tallies.take('ws_3', HOUR_MS, members)),
        );
        assert.equal(results.filter((r) => r !== null).length, 20);
        assert.deepEqual(
          await coord.tallies.read(
            'ws_3',
            HOUR_MS,
            members.map((m) => m.member),
          ),
          [4, 4, 4, 4, 4],
        );
      });
    });

    describe('locks', () => {
      test('a lock is exclusive until released', async () => {
        const held = await coord.lock('idem:k1', 10_000);
        assert.ok(held);
        assert.equal(held.key, 'idem:k1');
        assert.equal(await coord.lock('idem:k1', 10_000), null);
        assert.ok(await coord.lock('idem:k2', 10_000), 'keys are independent');
        await held.release();
        assert.ok(await coord.lock('idem:k1', 10_000));
      });

      test('extend keeps the lock past its first TTL', async () => {
        const held = await coord.lock('scheduler', 1_000);
        assert.ok(held);
        clock.advance(900);
        assert.equal(await held.extend(1_000), true);
        clock.advance(900);
        assert.equal(await coord.lock('scheduler', 1_000), null);
        clock.advance(100);
        assert.ok(await coord.lock('scheduler', 1_000));
      });

      test('TTL expiry lets another take it; the old owner can neither extend nor release it', async () => {
        const first = await coord.lock('dispatcher', 1_000);
        assert.ok(first);
        clock.advance(999);
        assert.equal(await coord.lock('dispatcher', 1_000), null);
        clock.advance(1);
        const second = await coord.lock('dispatcher', 1_000);
        assert.ok(second);
        assert.equal(await first.extend(5_000), false);
        await first.release();
        assert.equal(await coord.lock('dispatcher', 1_000), null, "the new owner's lock survives");
        assert.equal(await second.extend(1_000), true);
        await second.release();
        assert.ok(await coord.lock('dispatcher', 1_000));
      });

      test('an expired lock cannot be extended even when nobody took it', async () => {
        const held = await coord.lock('job', 1_000);
        assert.ok(held);
        clock.advance(1_000);
        assert.equal(await held.extend(1_000), false);
        await assert.rejects(coord.lock('job', 0), RangeError);
      });
    });

    describe('pub/sub', () => {
      test('a subscriber receives what is published, asynchronously and in order', async () => {
        const box = inbox();
        await coord.subscribe('call_1:events', box.handler);
        const sent = coord.publish('call_1:events', 'one');
        assert.deepEqual(box.messages, [], 'delivery never runs inside publish');
        await sent;
        await coord.publish('call_1:events', 'two');
        await box.until(2);
        assert.deepEqual(box.messages, ['one', 'two']);
      });

      test('channels are separate', async () => {
        const other = inbox();
        const mine = inbox();
        await coord.subscribe('other', other.handler);
        await coord.subscribe('mine', mine.handler);
        await coord.publish('mine', 'for me');
        await coord.publish('other', 'sentinel');
        await other.until(1);
        assert.deepEqual(other.messages, ['sentinel']);
        assert.deepEqual(mine.messages, ['for me']);
      });

      test('unsubscribe stops delivery, and a channel can be subscribed again', async () => {
        const gone = inbox();
        const staying = inbox();
        const unsubscribeGone = await coord.subscribe('wake', gone.handler);
        const unsubscribeStaying = await coord.subscribe('wake', staying.handler);
        await unsubscribeGone();
        await unsubscribeGone();
        await coord.publish('wake', 'm1');
        await staying.until(1);
        assert.deepEqual(gone.messages, []);

        await unsubscribeStaying();
        const again = inbox();
        await coord.subscribe('wake', again.handler);
        await coord.publish('wake', 'm2');
        await again.until(1);
        assert.deepEqual(again.messages, ['m2']);
        assert.deepEqual(staying.messages, ['m1']);
        assert.deepEqual(gone.messages, []);
      });

      test("a handler's error is reported and does not stop the other handlers", async () => {
        const box = inbox();
        await coord.subscribe('c', () => {
          throw new Error('handler broke');
        });
        await coord.subscribe('c', async () => {
          throw new Error('async handler broke');
        });
        await coord.subscribe('c', box.handler);
        await coord.publish('c', 'hello');
        await box.until(1);
        await new Promise((resolve) => setImmediate(resolve));
        const messages = reported.map((error) => (error instanceof Error ? error.message : String(error)));
        assert.deepEqual(messages.sort(), ['async handler broke', 'handler broke']);
      });
    });

    test('ping answers true until closed', async () => {
      assert.equal(await coord.ping(), true);
      await coord.close();
      assert.equal(await coord.ping(), false);
    });
  });
}

conformance('MemoryCoordinator', (clock, reportError) => new MemoryCoordinator({ clock, reportError }));

const url = await redisUrl();
/** Every key of this run starts with it, so the run cleans up after itself. */
const runPrefix = uniqueName('coordtest');
let coordinatorCount = 0;
const nextPrefix = () => `${runPrefix}:${++coordinatorCount}`;

describe('RedisCoordinator', { skip: url ? false : 'REDIS_URL is not set' }, () => {
  const redis = url ?? '';

  after(async () => {
    const admin = new Redis(redis);
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${runPrefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await admin.quit();
  });

  conformance(
    'conformance',
    (clock, reportError) => new RedisCoordinator({ url: redis, clock, keyPrefix: nextPrefix(), reportError }),
  );

  describe('two coordinators on one Redis and one prefix', () => {
    let clock: ManualClock;
    let one: Coordinator;
    let two: Coordinator;
    let keyPrefix: string;

    beforeEach(() => {
      clock = new ManualClock();
      keyPrefix = nextPrefix();
      one = new RedisCoordinator({ url: redis, clock, keyPrefix });
      two = new RedisCoordinator({ url: redis, clock, keyPrefix });
    });
    afterEach(() => Promise.all([one.close(), two.close()]));

    it('see each other’s slots and leases', { timeout: CASE_TIMEOUT_MS }, async () => {
      assert.equal(await one.slots.acquire('ws', 2, 'call_a', 1_000), true);
      assert.equal(await two.slots.acquire('ws', 2, 'call_b', 5_000), true);
      assert.equal(await one.slots.acquire('ws', 2, 'call_c', 1_000), false);
      assert.deepEqual(await two.slots.holders('ws'), ['call_a', 'call_b']);
      clock.advance(1_000);
      assert.equal(await two.slots.renew('ws', 'call_a', 1_000), false);
      assert.equal(await two.slots.acquire('ws', 2, 'call_c', 1_000), true);
      await one.slots.release('ws', 'call_b');
      assert.deepEqual(await two.slots.holders('ws'), ['call_c']);
    });

    it('see each other’s locks', { timeout: CASE_TIMEOUT_MS }, async () => {
      const held = await one.lock('leader', 1_000);
      assert.ok(held);
      assert.equal(await two.lock('leader', 1_000), null);
      clock.advance(1_000);
      const taken = await two.lock('leader', 1_000);
      assert.ok(taken);
      await held.release();
      assert.equal(await one.lock('leader', 1_000), null);
      await taken.release();
      assert.ok(await one.lock('leader', 1_000));
    });

    it('see each other’s pub/sub messages', { timeout: CASE_TIMEOUT_MS }, async () => {
      const atTwo = inbox();
      const atOne = inbox();
      await two.subscribe('call_1:control', atTwo.handler);
      await one.subscribe('call_1:control', atOne.handler);
      await one.publish('call_1:control', 'hangup');
      await atTwo.until(1);
      await atOne.until(1);
      assert.deepEqual(atTwo.messages, ['hangup']);
      assert.deepEqual(atOne.messages, ['hangup']);
    });

    it('agree when their state began, and a loss of the keys begins it again', {
      timeout: CASE_TIMEOUT_MS,
    }, async () => {
      const began = await one.stateSince();
      assert.equal(began, clock.now());
      clock.advance(5_000);
      assert.equal(await two.stateSince(), began, 'the state is as old as its first look');
      const admin = new Redis(redis);
      try {
        // What a restart without persistence or a flush does to this deployment's keys.
        const keys = await admin.keys(`${keyPrefix}:*`);
        if (keys.length > 0) await admin.del(...keys);
      } finally {
        await admin.quit();
      }
      assert.equal(await two.stateSince(), clock.now());
    });

    it('share tallies: concurrent takes from both never pass a limit', {
      timeout: CASE_TIMEOUT_MS,
    }, async () => {
      const members = [
        { member: 'pn_a', limit: 3 },
        { member: 'pn_b', limit: 3 },
      ];
      const takes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).tallies.take('ws', HOUR_MS, members)),
      );
      assert.equal(takes.filter((t) => t !== null).length, 6);
      assert.deepEqual(await one.tallies.read('ws', HOUR_MS, ['pn_a', 'pn_b']), [3, 3]);
    });

    it('share rate limits and counters', { timeout: CASE_TIMEOUT_MS }, async () => {
      assert.equal(await drain(one, 'key_1', 10, 3), 3);
      assert.equal((await two.rateLimit('key_1', 10, 3)).allowed, false);
      await one.counters.incr('flow-tests', HOUR_MS);
      assert.equal(await two.counters.incr('flow-tests', HOUR_MS), 2);
    });
  });

  describe('namespacing and connections', () => {
    const test = (title: string, fn: () => Promise<void>) => it(title, { timeout: CASE_TIMEOUT_MS }, fn);

    test('different prefixes share no key and no channel', async () => {
      const clock = new ManualClock();
      const mine = new RedisCoordinator({ url: redis, clock, keyPrefix: nextPrefix() });
      const theirs = new RedisCoordinator({ url: redis, clock, keyPrefix: nextPrefix() });
      try {
        await mine.slots.acquire('ws', 1, 'call_a', 60_000);
        assert.deepEqual(await theirs.slots.holders('ws'), []);
        assert.ok(await mine.lock('leader', 60_000));
        assert.ok(await theirs.lock('leader', 60_000));
        const box = inbox();
        await theirs.subscribe('news', box.handler);
        await mine.publish('news', 'not for them');
        await theirs.publish('news', 'sentinel');
        await box.until(1);
        assert.deepEqual(box.messages, ['sentinel']);
      } finally {
        await Promise.all([mine.close(), theirs.close()]);
      }
    });

    test('close quits the command and the subscriber connection', async () => {
      const keyPrefix = nextPrefix();
      const coord = new RedisCoordinator({ url: redis, keyPrefix });
      const admin = new Redis(redis);
      /** Names of this coordinator's connections that Redis still lists. */
      const connections = async () => {
        const list: unknown = await admin.client('LIST');
        assert.ok(typeof list === 'string');
        return list
          .split('\n')
          .map((line) => /\bname=(\S+)/.exec(line)?.[1])
          .filter((name) => name?.startsWith(`${keyPrefix}:`))
          .sort();
      };
      try {
        await coord.subscribe('c', () => undefined);
        assert.equal(await coord.ping(), true);
        assert.deepEqual(await connections(), [`${keyPrefix}:coord`, `${keyPrefix}:coord-subscriber`]);
        await coord.close();
        assert.deepEqual(await connections(), []);
      } finally {
        await admin.quit();
      }
    });

    test('ping answers false, without throwing, when Redis does not answer', async () => {
      const port = await closedPort();
      const errors: unknown[] = [];
      const coord = new RedisCoordinator({
        url: `redis://127.0.0.1:${port}`,
        keyPrefix: nextPrefix(),
        pingTimeoutMs: 200,
        reportError: (error) => errors.push(error),
      });
      try {
        assert.equal(await coord.ping(), false);
      } finally {
        await coord.close();
      }
    });
  });
});

describe('createCoordinator', () => {
  it('is in-process without a Redis URL', async () => {
    const coord = createCoordinator({ clock: new ManualClock() });
    assert.equal(coord.kind, 'memory');
    await coord.close();
  });

  it('uses Redis with a URL', { skip: url ? false : 'REDIS_URL is not set' }, async () => {
    const coord = createCoordinator({ redisUrl: url, keyPrefix: nextPrefix() });
    assert.equal(coord.kind, 'redis');
    assert.equal(await coord.ping(), true);
    await coord.close();
  });
});

/** A local port nothing listens on: bound by the OS, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address && typeof address === 'object');
  return address.port;
}

describe('RedisCoordinator through a Redis restart', {
  skip: !redisServerAvailable() && 'redis-server is not installed',
}, () => {
  let server: RedisServer;
  before(async () => {
    server = await RedisServer.start();
  });
  after(() => server?.stop());

  it('reports the outage once when the connections drop and once when they are back, with how long it lasted', {
    timeout: 30_000,
  }, async () => {
    const changes: ConnectionChange[] = [];
    const coord = new RedisCoordinator({
      url: server.url,
      keyPrefix: nextPrefix(),
      reportConnection: (change) => changes.push(change),
    });
    try {
      const box = inbox();
      await coord.subscribe('news', box.handler);
      assert.equal(await coord.slots.acquire('ws', 1, 'call_a', 60_000), true);
      await server.restart(700);
      const deadline = Date.now() + 20_000;
      while (!changes.some((change) => change.state === 'restored')) {
        if (Date.now() > deadline) assert.fail(`no recovery reported: ${JSON.stringify(changes)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(
        changes.map((change) => change.state),
        ['lost', 'restored'],
      );
      const restored = changes[1];
      assert.ok(restored?.state === 'restored' && restored.downMs >= 700, JSON.stringify(restored));
      assert.deepEqual(await coord.slots.holders('ws'), [], 'the restart lost every key');
      await coord.publish('news', 'after the restart');
      await box.until(1);
      assert.deepEqual(box.messages, ['after the restart'], 'subscriptions come back by themselves');
    } finally {
      await coord.close();
    }
  });

  it('while Redis is away every call fails at once as unavailable, and works again once it is back', {
    timeout: 30_000,
  }, async () => {
    const coord = new RedisCoordinator({
      url: server.url,
      keyPrefix: nextPrefix(),
      reportConnection: () => {},
    });
    try {
      assert.equal(await coord.slots.acquire('ws', 1, 'call_a', 60_000), true);
      await server.down();
      // The client notices the closed connection within a moment; then nothing waits for Redis.
      const deadline = Date.now() + 10_000;
      while (await coord.ping()) {
        if (Date.now() > deadline) assert.fail('the coordinator did not notice Redis going away');
      }
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['rateLimit', () => coord.rateLimit('k', 10, 20)],
        ['slots.acquire', () => coord.slots.acquire('ws', 1, 'call_b', 60_000)],
        ['slots.renew', () => coord.slots.renew('ws', 'call_a', 60_000)],
        ['slots.holders', () => coord.slots.holders('ws')],
        ['counters.incr', () => coord.counters.incr('c', 60_000)],
        ['lock', () => coord.lock('l', 1_000)],
        ['publish', () => coord.publish('news', 'lost')],
        ['subscribe', () => coord.subscribe('news', () => {})],
        ['stateSince', () => coord.stateSince()],
      ];
      for (const [name, call] of calls) {
        await assert.rejects(call(), CoordinatorUnavailableError, name);
      }
      await server.up();
      const back = Date.now() + 20_000;
      for (;;) {
        try {
          assert.equal(await coord.slots.acquire('ws', 1, 'call_b', 60_000), true, 'the restart lost call_a');
          break;
        } catch (error) {
          assert.ok(error instanceof CoordinatorUnavailableError, String(error));
          if (Date.now() > back) assert.fail('the coordinator did not come back by itself');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      assert.equal((await coord.rateLimit('k', 10, 20)).allowed, true);
    } finally {
      await coord.close();
    }
  });
});
