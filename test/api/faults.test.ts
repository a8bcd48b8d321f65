/** Server faults answer 500 internal in the envelope, health says degraded, and no secret reaches the logs. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../core/logger.ts';
import { backends, client, request, startTestPlatform } from '../support/platform.ts';

const [embedded] = await backends();

test('a broken store: 500 internal without internals, /healthz 503, nothing secret logged', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const p = await startTestPlatform(embedded!, { logger: createLogger({ logLevel: 'debug' }, sink) });
  try {
    const api = client(p.url, p.apiKey);
    const created = await api('POST', '/v2/agents', { body: { name: 'Before' } });
    assert.equal(created.status, 201);
    // Break the store under the running API: every query now fails.
    await p.platform.store.close();

    const r = await api('GET', '/v2/wallet');
    assert.equal(r.status, 500);
    assert.deepEqual(Object.keys(r.body), ['error']);
    assert.equal((r.body.error as { code: string }).code, 'internal');
    assert.ok(!/at |\.ts|sqlite|kysely/i.test(r.text), `no internals in ${r.text}`);
    const health = await request(p.url, 'GET', '/healthz');
    assert.equal(health.status, 503);
    assert.equal(health.body.status, 'degraded');

    const logs = lines.join('');
    assert.match(logs, /request failed/, 'the fault is logged');
    assert.ok(!logs.includes(p.apiKey), 'the API key never reaches the logs');
  } finally {
    // The store is already closed; closing it again may complain, the servers must still stop.
    await p.close().catch(() => undefined);
  }
});
