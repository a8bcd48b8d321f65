/**
 * Stream tokens: signed, call-bound, carrier-bound, short-lived and good once; every refusal has its reason.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import { MemoryTokenClaims, StreamTokens, type TokenClaims } from './stream-tokens.ts';

const SECRET = 'test-secret-0123456789abcdef0123456789';

function setup(claims?: TokenClaims) {
  const clock = new ManualClock();
  const tokens = new StreamTokens({ secret: SECRET, claims: claims ?? new MemoryTokenClaims(clock), clock });
  return { clock, tokens };
}

describe('StreamTokens', () => {
  test('a fresh token verifies once, to its call', async () => {
    const { tokens } = setup();
    const token = tokens.mint('call_A', 'twilio', 60_000);
    const first = await tokens.verify(token, 'twilio');
    assert.equal(first.ok, true);
    assert.equal(first.ok && first.callId, 'call_A');
    assert.deepEqual(
      await tokens.verify(token, 'twilio'),
      { ok: false, reason: 'reused', callId: 'call_A' },
      'a genuine token refused for its use still names its call',
    );
  });

  test('the token is URL-safe (it goes into query strings and TwiML unescaped)', () => {
    const { tokens } = setup();
    const token = tokens.mint('call_A', 'web', 60_000);
    assert.match(token, /^vst1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.equal(encodeURIComponent(token), token);
  });

  test('expired after its ttl (plus the clock-skew allowance)', async () => {
    const { clock, tokens } = setup();
    const token = tokens.mint('call_A', 'exotel', 1000);
    clock.advance(1000 + 5000);
    assert.deepEqual(await tokens.verify(token, 'exotel'), {
      ok: false,
      reason: 'expired',
      callId: 'call_A',
    });
  });

  test('another call id than the one the stream names is wrong_call, and does not burn the token', async () => {
    const { tokens } = setup();
    const token = tokens.mint('call_A', 'web', 60_000);
    assert.deepEqual(await tokens.verify(token, 'web', 'call_B'), { ok: false, reason: 'wrong_call' });
    const right = await tokens.verify(token, 'web', 'call_A');
    assert.equal(right.ok, true);
  });

  test('a token for another carrier is wrong_carrier', async () => {
    const { tokens } = setup();
    const token = tokens.mint('call_A', 'plivo', 60_000);
    assert.deepEqual(await tokens.verify(token, 'vonage'), { ok: false, reason: 'wrong_carrier' });
  });

  test('tampering breaks the signature; another secret does too', async () => {
    const { tokens, clock } = setup();
    const token = tokens.mint('call_A', 'twilio', 60_000);
    const [v, payload, sig] = token.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), c: 'call_B' }),
    );
    assert.deepEqual(await tokens.verify(`${v}.${forged.toString('base64url')}.${sig}`, 'twilio'), {
      ok: false,
      reason: 'bad_signature',
    });
    const other = new StreamTokens({ secret: `${SECRET}x`, claims: new MemoryTokenClaims(clock), clock });
    assert.deepEqual(await other.verify(token, 'twilio'), { ok: false, reason: 'bad_signature' });
  });

  test('missing and malformed tokens', async () => {
    const { tokens } = setup();
    assert.deepEqual(await tokens.verify(undefined, 'twilio'), { ok: false, reason: 'missing' });
    assert.deepEqual(await tokens.verify('', 'twilio'), { ok: false, reason: 'missing' });
    for (const bad of ['abc', 'vst1.x', 'vst2.a.b', 'vst1.!!!.abc', 'vst1.e30.abc', 'x'.repeat(5000)]) {
      assert.deepEqual(
        await tokens.verify(bad, 'twilio'),
        { ok: false, reason: 'malformed' },
        bad.slice(0, 20),
      );
    }
  });

  test('a failing claim store answers check_failed', async () => {
    const { tokens } = setup({
      claim: async () => {
        throw new Error('coordinator down');
      },
    });
    const token = tokens.mint('call_A', 'twilio', 60_000);
    assert.deepEqual(await tokens.verify(token, 'twilio'), { ok: false, reason: 'check_failed' });
  });

  test('mint refuses a weak secret and silly ttls', () => {
    assert.throws(() => new StreamTokens({ secret: 'short', claims: new MemoryTokenClaims() }));
    const { tokens } = setup();
    assert.throws(() => tokens.mint('call_A', 'twilio', 0));
    assert.throws(() => tokens.mint('call_A', 'twilio', 3_600_000));
  });

  test('memory claims expire with the token', async () => {
    const clock = new ManualClock();
    const claims = new MemoryTokenClaims(clock);
    assert.equal(await claims.claim('t1', 1000), true);
    assert.equal(await claims.claim('t1', 1000), false);
    clock.advance(1001);
    assert.equal(await claims.claim('t1', 1000), true);
  });
});
