/**
 * Stream tokens at the socket: a wrong, expired, reused, other call's, other carrier's or missing token closes
 * the socket with its documented close code (close-codes.ts), wherever the carrier carries the token (URL query,
 * custom parameters, extra headers, connected headers); every refusal is counted, and no token is ever logged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { CLOSE } from './close-codes.ts';
import { startTestGateway, TestClient, type TestGateway } from './testing/harness.ts';

const SID = 'MZ00000000000000000000000000000001';

function twilioStart(parameters: Record<string, string>) {
  return {
    event: 'start',
    sequenceNumber: '1',
    streamSid: SID,
    start: {
      streamSid: SID,
      callSid: 'CA1',
      customParameters: parameters,
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  };
}

describe('stream tokens at the socket', () => {
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  const used: string[] = [];
  const mint = (callId: string, carrier: Parameters<TestGateway['mint']>[1], ttlMs = 60_000) => {
    const token = gw.mint(callId, carrier, ttlMs);
    used.push(token);
    return token;
  };
  before(async () => {
    gw = await startTestGateway({ clock });
  });
  after(async () => {
    await gw.close();
    for (const token of used) {
      for (const line of gw.logLines) assert.ok(!line.includes(token), 'a token appeared in a log line');
    }
    assert.ok(
      gw.logLines.some((line) => line.includes('stream token refused')),
      'refusals are logged',
    );
  });

  async function twilioWith(parameters: Record<string, string>) {
    const c = await TestClient.open(gw.url('/media/twilio'));
    c.send(twilioStart(parameters));
    return c.closed;
  }

  test('Twilio, token in customParameters: each refusal has its code and reason', async () => {
    const good = mint('call_A', 'twilio');
    const [v, payload, sig] = good.split('.') as [string, string, string];
    const tampered = `${v}.${payload}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
    assert.deepEqual(await twilioWith({ token: tampered }), {
      code: CLOSE.token_bad_signature,
      reason: 'token_bad_signature',
    });
    assert.deepEqual(await twilioWith({}), { code: CLOSE.token_missing, reason: 'token_missing' });
    assert.deepEqual(await twilioWith({ token: 'not-a-token' }), {
      code: CLOSE.token_malformed,
      reason: 'token_malformed',
    });
    assert.deepEqual(await twilioWith({ token: mint('call_A', 'exotel') }), {
      code: CLOSE.token_wrong_carrier,
      reason: 'token_wrong_carrier',
    });
    assert.deepEqual(await twilioWith({ token: good, call_id: 'call_B' }), {
      code: CLOSE.token_wrong_call,
      reason: 'token_wrong_call',
    });
    const expiring = mint('call_A', 'twilio', 1000);
    clock.advance(10_000);
    assert.deepEqual(await twilioWith({ token: expiring }), {
      code: CLOSE.token_expired,
      reason: 'token_expired',
    });

    // The good token was not burnt by the refusals above; it works once, then is reused.
    const first = await TestClient.open(gw.url('/media/twilio'));
    first.send(twilioStart({ token: good }));
    first.send({
      event: 'media',
      streamSid: SID,
      media: { payload: Buffer.alloc(160, 0xff).toString('base64') },
    });
    await first.waitFor(() => first.json().some((m) => m.event === 'media'), 5000, 'echo on the good token');
    assert.deepEqual(await twilioWith({ token: good }), { code: CLOSE.token_reused, reason: 'token_reused' });
    first.close();
    await first.closed;
  });

  test('browser: the URL token is checked against the path call id', async () => {
    const token = mint('call_W', 'web');
    const other = await TestClient.open(gw.url(`/web/call_X?token=${token}`));
    assert.deepEqual(await other.closed, { code: CLOSE.token_wrong_call, reason: 'token_wrong_call' });
    const right = await TestClient.open(gw.url(`/web/call_W?token=${token}`));
    right.send({ type: 'hello', codec: 'pcm16', sample_rate: 16000 });
    await right.waitFor(() => right.json().some((m) => m.type === 'ready'), 5000, 'ready');
    const again = await TestClient.open(gw.url(`/web/call_W?token=${token}`));
    assert.deepEqual(await again.closed, { code: CLOSE.token_reused, reason: 'token_reused' });
    const none = await TestClient.open(gw.url('/web/call_W'));
    none.send({ type: 'hello' });
    assert.deepEqual(await none.closed, { code: CLOSE.token_missing, reason: 'token_missing' });
    right.close();
    await right.closed;
  });

  test('Exotel and Plivo: URL query and in-band tokens', async () => {
    const expired = mint('call_E', 'exotel', 1000);
    clock.advance(10_000);
    const e = await TestClient.open(gw.url(`/media/exotel?sample-rate=8000&token=${expired}`));
    assert.deepEqual(await e.closed, { code: CLOSE.token_expired, reason: 'token_expired' });

    const p = await TestClient.open(gw.url('/media/plivo'));
    p.send({
      event: 'start',
      start: { callId: 'c', streamId: 's', mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } },
      extra_headers: `token=${mint('call_P', 'twilio')}`,
    });
    assert.deepEqual(await p.closed, { code: CLOSE.token_wrong_carrier, reason: 'token_wrong_carrier' });
  });

  test('Vonage: token in the connected headers, and refusals are counted in /metrics', async () => {
    const token = mint('call_V', 'vonage');
    const ok = await TestClient.open(gw.url('/media/vonage'));
    ok.send({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=16000', token });
    ok.sendBinary(new Uint8Array(640));
    await ok.waitFor(() => ok.binaries().length >= 1, 5000, 'echo');
    const reused = await TestClient.open(gw.url(`/media/vonage?token=${token}`));
    assert.deepEqual(await reused.closed, { code: CLOSE.token_reused, reason: 'token_reused' });
    ok.close();
    await ok.closed;

    const metrics = await gw.registry.metrics();
    assert.match(metrics, /gateway_token_rejections_total\{carrier="twilio",reason="bad_signature"\} 1/);
    assert.match(metrics, /gateway_token_rejections_total\{carrier="twilio",reason="reused"\} 1/);
    assert.match(metrics, /gateway_token_rejections_total\{carrier="web",reason="wrong_call"\} 1/);
    assert.match(metrics, /gateway_token_rejections_total\{carrier="vonage",reason="reused"\} 1/);
    assert.match(metrics, /gateway_streams_closed_total\{carrier="twilio",reason="token_expired"\} 1/);
  });
});
