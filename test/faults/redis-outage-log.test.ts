/**
 * A Redis outage in the platform's log: one line when the connection is lost and one when it is back, with how
 * long it lasted, through the platform's logger; not a line (or a process warning) per retry of every part that
 * needs Redis meanwhile (the dialer's passes, recovery's sweeps, the webhook dispatcher). The platform runs every
 * role in one process on a redis-server of this suite's own, which it stops for a few seconds.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../core/logger.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { RedisServer, redisServerAvailable } from '../support/redis-server.ts';

interface LogLine {
  level: number;
  msg: string;
  down_ms?: number;
  err?: { type?: string; message?: string };
}

describe('a Redis outage in the log', {
  skip: !redisServerAvailable() && 'redis-server is not installed',
}, () => {
  let redis: RedisServer;
  let platform: TestPlatform;
  const lines: LogLine[] = [];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

  before(async () => {
    redis = await RedisServer.start();
    platform = await startTestPlatform(
      { name: 'sqlite+own redis', redisUrl: redis.url },
      {
        env: { ROLES: 'api,gateway,worker' },
        logger: createLogger(
          { logLevel: 'info' },
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              lines.push(JSON.parse(chunk.toString()) as LogLine);
              done();
            },
          }),
        ),
      },
    );
    process.on('warning', onWarning);
  });

  after(async () => {
    process.off('warning', onWarning);
    await redis?.up();
    await platform?.close();
    await redis?.stop();
  });

  test('once when lost, once when back with how long it lasted, nothing per retry', {
    timeout: 60_000,
  }, async () => {
    const from = lines.length;
    await redis.down();
    // Long enough for the dialer (every second) and recovery (every few seconds) to try several times.
    await sleep(3_500);
    await redis.up();
    const deadline = Date.now() + 20_000;
    while (!lines.slice(from).some((line) => line.msg === 'connection to Redis restored')) {
      if (Date.now() > deadline) assert.fail('no line said Redis was back');
      await sleep(100);
    }
    // The parts that waited for Redis try again within a second or two; none of that is news.
    await sleep(2_000);
    const during = lines.slice(from).filter((line) => line.level >= 40);
    const lost = during.filter((line) => line.msg.startsWith('lost the connection to Redis'));
    const restored = during.filter((line) => line.msg === 'connection to Redis restored');
    assert.equal(lost.length, 1, JSON.stringify(during));
    assert.equal(restored.length, 1, JSON.stringify(during));
    const downMs = restored[0]?.down_ms ?? 0;
    assert.ok(downMs >= 3_000 && downMs < 15_000, `down_ms ${downMs}`);
    const noise = during.filter((line) => !lost.includes(line) && !restored.includes(line));
    assert.deepEqual(
      noise.map((line) => `${line.msg}: ${line.err?.message ?? ''}`),
      [],
      'nothing else is logged about the outage',
    );
    assert.deepEqual(
      warnings.filter((warning) => /coordinator|redis/i.test(warning)),
      [],
      'no process warnings',
    );
  });
});
