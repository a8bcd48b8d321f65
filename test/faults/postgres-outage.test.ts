/**
 * Faults the platform survives: PostgreSQL unreachable for a few seconds. The platform reaches PostgreSQL through
 * a loopback proxy that this suite cuts and restores (the shared server is never stopped). While it is cut, the
 * API answers 503 in the error envelope with Retry-After, not 500; once it is back, the API answers again by
 * itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { postgresUrl } from '../support/services.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const databaseUrl = await postgresUrl();

describe('a PostgreSQL outage of a few seconds', { skip: !databaseUrl && 'DATABASE_URL is not set' }, () => {
  let proxy: TcpProxy;
  let platform: TestPlatform;
  let api: ReturnType<typeof client>;

  before(async () => {
    const target = new URL(databaseUrl as string);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(databaseUrl as string);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.listeningPort);
    platform = await startTestPlatform({ name: 'postgres', databaseUrl: viaProxy.toString() });
    api = client(platform.url, platform.apiKey);
  });

  after(async () => {
    await proxy?.restore();
    await platform?.close();
    await proxy?.close();
  });

  test('the API answers 503 in the error envelope while the database is away, and recovers by itself', async () => {
    assert.equal((await api('GET', '/v2/agents')).status, 200);

    await proxy.cut();
    for (const [method, path] of [
      ['GET', '/v2/agents'],
      ['GET', '/v2/wallet'],
    ] as const) {
      const response = await api(method, path);
      assert.equal(response.status, 503, `${method} ${path}: ${response.text}`);
      assert.equal(errorCode(response), 'service_unavailable');
      assert.ok(Number(response.headers.get('retry-after')) >= 1, 'with Retry-After');
    }

    await proxy.restore();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const response = await api('GET', '/v2/agents');
      if (response.status === 200) break;
      assert.equal(response.status, 503, response.text);
      if (Date.now() > deadline) assert.fail('the API did not recover after the database came back');
      await sleep(100);
    }
  });
});
