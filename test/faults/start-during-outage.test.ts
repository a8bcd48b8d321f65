/**
 * Faults the platform survives: a node (re)started while PostgreSQL or Redis is away for seconds, as when a
 * supervisor restarts a killed worker in the middle of an outage. The node waits for them and then runs: it
 * does not exit and leave the queue without a dialer and live calls without recovery. The platform (api,
 * gateway and worker in one process) reaches PostgreSQL through a loopback proxy this suite cuts, and a
 * redis-server of its own that it stops; the shared services are never touched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningPlatform, startPlatform } from '../../cli/serve.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { client } from '../support/platform.ts';
import { RedisServer, redisServerAvailable } from '../support/redis-server.ts';
import { dropPostgresSchema, postgresUrl, uniqueName } from '../support/services.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const databaseUrl = await postgresUrl();
const LIVE = new Set(['queued', 'dialing', 'in_progress']);

describe('a node started while PostgreSQL or Redis is down', {
  skip:
    (!databaseUrl && 'DATABASE_URL is not set') ||
    (!redisServerAvailable() && 'redis-server is not installed'),
}, () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let dataDir: string;
  let platform: RunningPlatform | undefined;
  let apiKey: string;
  const schema = uniqueName('t').toLowerCase();
  const logged: string[] = [];
  const logger = createLogger(
    { logLevel: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString());
        done();
      },
    }),
  );

  const config = (overrides: Record<string, string> = {}) => {
    const viaProxy = new URL(databaseUrl as string);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.listeningPort);
    return loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_PORT: '0',
      ROLES: 'api,gateway,worker',
      DATA_DIR: dataDir,
      DATABASE_URL: viaProxy.toString(),
      DATABASE_SCHEMA: schema,
      REDIS_URL: redis.url,
      REDIS_PREFIX: uniqueName('t'),
      SANDBOX_RING_MS: '1500',
      LIVE_CALL_LEASE_MS: '3000',
      STARTUP_WAIT_MS: '30000',
      ...overrides,
    });
  };

  /** Places a call to a sandbox number that answers and hangs up after 2 s; it must end `completed`. */
  async function callCompletes(running: RunningPlatform): Promise<void> {
    const api = client(running.apiUrl as string, apiKey);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: { name: 'Asha', first_message: 'Hello, this is Asha.', max_duration_secs: 30 },
    });
    assert.equal(agent.status, 201, agent.text);
    const placed = await api<{ id: string }>('POST', '/v2/calls', {
      body: { to: '+919876500004', agent_id: agent.body.id },
    });
    assert.equal(placed.status, 202, placed.text);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const call = await api<{ status: string; ended_reason: string }>('GET', `/v2/calls/${placed.body.id}`);
      if (!LIVE.has(call.body.status)) {
        assert.equal(call.body.status, 'completed', call.text);
        return;
      }
      if (Date.now() > deadline) assert.fail(`the call stayed ${call.body.status}`);
      await sleep(200);
    }
  }

  function waitingLines(): string[] {
    return logged.filter((line) => line.includes('does not answer: waiting for it before starting'));
  }

  before(async () => {
    redis = await RedisServer.start();
    const target = new URL(databaseUrl as string);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-start-'));
  });

  after(async () => {
    await proxy?.restore();
    await redis?.up();
    await platform?.close();
    await proxy?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropPostgresSchema(databaseUrl, schema);
  });

  test('a first start with both away waits for them, then bootstraps and runs calls', {
    timeout: 90_000,
  }, async () => {
    await proxy.cut();
    await redis.down();
    const starting = startPlatform(config(), { logger });
    let startedEarly = false;
    void starting.then(
      () => {
        startedEarly = true;
      },
      () => {},
    );
    await sleep(1_500);
    await proxy.restore();
    await sleep(1_500);
    assert.equal(startedEarly, false, 'the node ran without Redis');
    await redis.up();
    platform = await starting;
    assert.ok(platform.bootstrapped, 'the first start created its workspace');
    apiKey = platform.bootstrapped.apiKey;
    assert.ok(waitingLines().length >= 1, logged.join(''));
    await callCompletes(platform);
  });

  test('a restart while Redis is away (the store answers) waits for Redis, then runs calls', {
    timeout: 90_000,
  }, async () => {
    await platform?.close();
    platform = undefined;
    logged.length = 0;
    await redis.down();
    const starting = startPlatform(config(), { logger });
    await sleep(2_000);
    await redis.up();
    platform = await starting;
    assert.equal(platform.bootstrapped, undefined);
    // The store answered at once: only the steps that need Redis waited, each logging it once.
    const waited = waitingLines();
    assert.ok(waited.length >= 1, logged.join(''));
    assert.ok(
      waited.every((line) => !line.includes('"step":"open the store"')),
      waited.join(''),
    );
    await callCompletes(platform);
  });

  test('a node gives up, as before, when its services stay away longer than STARTUP_WAIT_MS', {
    timeout: 30_000,
  }, async () => {
    await platform?.close();
    platform = undefined;
    await proxy.cut();
    try {
      const began = Date.now();
      await assert.rejects(startPlatform(config({ STARTUP_WAIT_MS: '1000' }), { logger }), /ECONNREFUSED/);
      const took = Date.now() - began;
      assert.ok(took >= 500 && took < 10_000, `gave up after ${took} ms`);
    } finally {
      await proxy.restore();
    }
  });
});
