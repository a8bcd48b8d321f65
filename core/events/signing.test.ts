import assert from 'node:assert/strict';
import { test } from 'node:test';
import Stripe from 'stripe';
import { signatureHeader, verifySignature } from './signing.ts';

const body = Buffer.from(
  '{"id":"evt_01J","type":"call.completed","data":{"call":{"id":"call_1","cost":{"amount_inr":1.5}}}}',
);
const secret = 'whsec_0123456789abcdef0123456789abcdef0123456789abcdef';
const now = 1_764_000_000;

test('an independent verifier (the stripe SDK, same scheme) accepts our signatures', () => {
  const stripe = new Stripe('sk_test_unused');
  const header = signatureHeader([secret], body, now);
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  const verify = () => stripe.webhooks.signature!.verifyHeader(body, header, secret, 300, undefined, now);
  assert.doesNotThrow(verify);
  assert.throws(() =>
    stripe.webhooks.signature!.verifyHeader(Buffer.from(`${body} `), header, secret, 300, undefined, now),
  );
});

test('during rotation both secrets sign, and either one verifies', () => {
  const next = 'whsec_fedcba9876543210fedcba9876543210fedcba9876543210';
  const header = signatureHeader([next, secret], body, now);
  assert.equal(header.split(',').length, 3);
  assert.deepEqual(verifySignature(header, body, secret, now), { ok: true });
  assert.deepEqual(verifySignature(header, body, next, now), { ok: true });
  const stripe = new Stripe('sk_test_unused');
  assert.doesNotThrow(() =>
    stripe.webhooks.signature!.verifyHeader(body, header, secret, 300, undefined, now),
  );
});

test('the receiver rules: window, raw bytes, malformed headers', () => {
  const header = signatureHeader([secret], body, now);
  assert.deepEqual(verifySignature(header, body, secret, now + 301), { ok: false, reason: 'expired' });
  assert.deepEqual(verifySignature(header, body, secret, now - 301), { ok: false, reason: 'expired' });
  assert.deepEqual(verifySignature(header, body, secret, now + 300), { ok: true });
  const reserialised = JSON.stringify(JSON.parse(body.toString()), null, 1);
  assert.deepEqual(verifySignature(header, reserialised, secret, now), { ok: false, reason: 'mismatch' });
  assert.deepEqual(verifySignature(header, body, 'whsec_other', now), { ok: false, reason: 'mismatch' });
  for (const bad of [undefined, '', 't=1', 'v1=abc', `t=x,v1=${'0'.repeat(64)}`, 't=1, v1=00']) {
    assert.deepEqual(verifySignature(bad, body, secret, now), { ok: false, reason: 'malformed' });
  }
});
