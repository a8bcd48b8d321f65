import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

test('defaults: embedded everything, all roles, spec limits', () => {
  const c = loadConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.gatewayPort, 8081);
  assert.deepEqual(c.roles, ['api', 'gateway', 'worker']);
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.redisUrl, undefined);
  assert.equal(c.dataDir, path.resolve('./data'));
  assert.equal(c.apiRatePerSec, 10);
  assert.equal(c.apiRateBurst, 20);
  assert.equal(c.bodyLimitBytes, 1_048_576);
  assert.equal(c.allowPrivateWebhooks, false);
  assert.ok(Object.isFrozen(c));
  assert.ok(Object.isFrozen(c.roles));
});

test('empty variables take defaults; zero is a value, not a default', () => {
  const c = loadConfig({ PORT: '', BOOTSTRAP_BALANCE_INR: '0', ALLOW_PRIVATE_WEBHOOKS: '1' });
  assert.equal(c.port, 8080);
  assert.equal(c.bootstrapBalanceInr, 0);
  assert.equal(c.allowPrivateWebhooks, true);
});

test('invalid settings are refused with the variable named', () => {
  for (const [env, name] of [
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ ROLES: 'api,pager' }, 'ROLES'],
    [{ ROLES: ',' }, 'ROLES'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ ALLOW_PRIVATE_WEBHOOKS: 'maybe' }, 'ALLOW_PRIVATE_WEBHOOKS'],
    [{ SECRET_KEY: 'short' }, 'SECRET_KEY'],
    [{ DATABASE_SCHEMA: 'Robert; DROP' }, 'DATABASE_SCHEMA'],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.message.includes(name),
    );
  }
});

test('roles are de-duplicated and trimmed', () => {
  assert.deepEqual(loadConfig({ ROLES: ' api , api,worker' }).roles, ['api', 'worker']);
});
