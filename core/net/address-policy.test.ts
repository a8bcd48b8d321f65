import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressPolicyError, assertPublicHost, isPrivateAddress } from './address-policy.ts';

test('internal addresses are recognised, public ones are not', () => {
  for (const a of [
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-ip',
  ]) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(isPrivateAddress(a), false, a);
  }
});

test('hosts resolving to loopback are refused unless the operator allows private targets', async () => {
  await assert.rejects(assertPublicHost('localhost', { allowPrivate: false }), AddressPolicyError);
  await assert.rejects(assertPublicHost('127.0.0.1', { allowPrivate: false }), AddressPolicyError);
  await assert.rejects(assertPublicHost('[::1]', { allowPrivate: false }), AddressPolicyError);
  await assertPublicHost('localhost', { allowPrivate: true });
  await assertPublicHost('8.8.8.8', { allowPrivate: false });
});

test('sockets refuse internal addresses at connect time, with and without family racing', async () => {
  const http = await import('node:http');
  const { guardedLookup } = await import('./address-policy.ts');
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const get = (allowPrivate: boolean, autoSelectFamily: boolean) =>
    new Promise<string>((resolve) => {
      const options = {
        host: 'localhost',
        port,
        lookup: guardedLookup({ allowPrivate }),
        autoSelectFamily,
        agent: false,
      };
      const req = http.get(options, (res) => {
        res.resume();
        resolve(`status ${res.statusCode}`);
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
  try {
    for (const race of [true, false]) {
      assert.equal(await get(false, race), 'EADDRNOTALLOWED');
      assert.equal(await get(true, race), 'status 200');
    }
  } finally {
    server.close();
  }
});
