/** The retry schedule as data, and its configuration (`WEBHOOK_RETRY_SCHEDULE_MS`, `WEBHOOK_TIMEOUT_MS`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../config.ts';
import { assertRetrySchedule, DEFAULT_RETRY_SCHEDULE_MS, nextAttemptAt } from './retry-schedule.ts';

test('six attempts: immediately, then after 1 s, 10 s, 60 s, 5 min and 30 min, then dead letter', () => {
  const failedAt = 1_000_000;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((attempts) => nextAttemptAt(attempts, failedAt, DEFAULT_RETRY_SCHEDULE_MS)),
    [failedAt + 1_000, failedAt + 10_000, failedAt + 60_000, failedAt + 300_000, failedAt + 1_800_000, null],
  );
  const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0);
  assert.ok(total > 35 * 60_000 && total < 37 * 60_000, 'roughly 36 minutes');
  assert.equal(nextAttemptAt(1, 0, [0]), null, 'a one-attempt schedule dead-letters at once');
});

test('a schedule starts immediately and has whole, non-negative delays', () => {
  assert.deepEqual(assertRetrySchedule([0, 5]), [0, 5]);
  for (const bad of [[], [1, 2], [0, -1], [0, 1.5]])
    assert.throws(() => assertRetrySchedule(bad), RangeError);
});

test('configuration: the default schedule and timeout, compressed ones for tests, bad lists refused', () => {
  const defaults = loadConfig({});
  assert.deepEqual(defaults.webhookRetryScheduleMs, DEFAULT_RETRY_SCHEDULE_MS);
  assert.equal(defaults.webhookTimeoutMs, 5_000);
  assert.ok(Object.isFrozen(defaults.webhookRetryScheduleMs));
  const tuned = loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0, 10,20', WEBHOOK_TIMEOUT_MS: '250' });
  assert.deepEqual(tuned.webhookRetryScheduleMs, [0, 10, 20]);
  assert.equal(tuned.webhookTimeoutMs, 250);
  for (const env of [
    { WEBHOOK_RETRY_SCHEDULE_MS: '1000,2000' },
    { WEBHOOK_RETRY_SCHEDULE_MS: '0,soon' },
    { WEBHOOK_RETRY_SCHEDULE_MS: '0,-5' },
    { WEBHOOK_TIMEOUT_MS: '0' },
  ]) {
    assert.throws(
      () => loadConfig(env),
      (e) => e instanceof ConfigError && e.message.includes(Object.keys(env)[0] ?? ''),
    );
  }
});
