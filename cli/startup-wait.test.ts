import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { CoordinatorUnavailableError } from '../core/coord/unavailable.ts';
import { createLogger } from '../core/logger.ts';
import { StartupWait } from './startup-wait.ts';

function recordingLogger() {
  const lines: Array<{ msg: string; step?: string; tries?: number }> = [];
  const logger = createLogger(
    { logLevel: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  return { logger, lines };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

test('a step refused for want of PostgreSQL or Redis is undone and tried again until it goes through', async () => {
  const { logger, lines } = recordingLogger();
  const wait = new StartupWait({ waitMs: 5_000, logger, firstPauseMs: 5 });
  const failures = [refused(), new CoordinatorUnavailableError(), refused()];
  let tries = 0;
  let undone = 0;
  const result = await wait.step(
    'start the roles',
    async () => {
      tries++;
      const failure = failures.shift();
      if (failure) throw failure;
      return 'running';
    },
    async () => {
      undone++;
    },
  );
  assert.equal(result, 'running');
  assert.equal(tries, 4);
  assert.equal(undone, 3);
  // One line when it began to wait, one when it went through: not one per try.
  assert.deepEqual(
    lines.map((line) => [line.msg, line.step, line.tries]),
    [
      ['PostgreSQL or Redis does not answer: waiting for it before starting', 'start the roles', undefined],
      ['PostgreSQL and Redis answer: the start goes on', 'start the roles', 4],
    ],
  );
});

test('any other failure ends the start at once, after undoing the try', async () => {
  const { logger, lines } = recordingLogger();
  const wait = new StartupWait({ waitMs: 5_000, logger, firstPauseMs: 5 });
  let tries = 0;
  let undone = 0;
  await assert.rejects(
    wait.step(
      'start the roles',
      async () => {
        tries++;
        throw new Error('media gateway could not listen on 127.0.0.1:8081: the port is in use');
      },
      async () => {
        undone++;
      },
    ),
    /port is in use/,
  );
  assert.deepEqual([tries, undone, lines.length], [1, 1, 0]);
});

test('the wait is one budget for the whole start: a later step gets what the earlier ones left', async () => {
  const { logger } = recordingLogger();
  const wait = new StartupWait({ waitMs: 300, logger, firstPauseMs: 20 });
  const began = Date.now();
  let first = 0;
  await wait.step('open the store', async () => {
    if (++first < 4) throw refused();
  });
  const spent = Date.now() - began;
  assert.ok(spent >= 120, `the first step waited ${spent} ms`);
  await assert.rejects(
    wait.step('bootstrap', async () => {
      throw new CoordinatorUnavailableError();
    }),
    CoordinatorUnavailableError,
  );
  const total = Date.now() - began;
  assert.ok(total < 300 + 200, `the start waited ${total} ms in all for a 300 ms budget`);
});

test('STARTUP_WAIT_MS=0: the first refusal ends the start', async () => {
  const { logger } = recordingLogger();
  const wait = new StartupWait({ waitMs: 0, logger });
  let tries = 0;
  await assert.rejects(
    wait.step('open the store', async () => {
      tries++;
      throw refused();
    }),
    /ECONNREFUSED/,
  );
  assert.equal(tries, 1);
});
