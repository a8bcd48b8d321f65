import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { type DrainableCalls, drainLiveCalls } from './drain.ts';

const silent = pino({ level: 'silent' });

/** Calls that end when told (`finish`), or are ended by `endAll`. */
function calls(count: number) {
  let live = count;
  let idle: () => void = () => {};
  const idlePromise = new Promise<void>((resolve) => {
    idle = resolve;
  });
  if (count === 0) idle();
  const ended: number[] = [];
  const part: DrainableCalls = {
    get live() {
      return live;
    },
    idle: () => idlePromise,
    endAll: async () => {
      ended.push(live);
      const n = live;
      live = 0;
      return n;
    },
  };
  return {
    part,
    ended,
    finish() {
      live = 0;
      idle();
    },
  };
}

test('calls that end inside the window are not ended by the drain', async () => {
  const gateway = calls(2);
  const drained = drainLiveCalls({ live_calls: gateway.part }, { windowMs: 60_000, logger: silent });
  gateway.finish();
  await drained;
  assert.deepEqual(gateway.ended, [0]);
});

test('past the window, what is left is ended', async () => {
  const gateway = calls(2);
  await drainLiveCalls({ live_calls: gateway.part }, { windowMs: 10, logger: silent });
  assert.deepEqual(gateway.ended, [2]);
});

test('endNow (a second signal) ends the calls without waiting for the window', async () => {
  const gateway = calls(1);
  const sandbox = calls(1);
  await drainLiveCalls(
    { live_calls: gateway.part, sandbox_calls: sandbox.part },
    { windowMs: 3_600_000, endNow: Promise.resolve(), logger: silent },
  );
  assert.deepEqual(gateway.ended, [1]);
  assert.deepEqual(sandbox.ended, [1]);
});

test('a node without live calls stops at once', async () => {
  const gateway = calls(0);
  await drainLiveCalls({ live_calls: gateway.part }, { windowMs: 3_600_000, logger: silent });
  assert.deepEqual(gateway.ended, [0]);
});
