/** `serve --roles api,gateway`: the media gateway starts beside the API and guards its streams with tokens. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { MemoryTokenClaims, StreamTokens } from '../../gateway/tokens.ts';
import { backends, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const [embedded] = await backends();

function twilioStart(token: string | undefined) {
  return JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    streamSid: 'MZ1',
    start: {
      accountSid: 'AC1',
      streamSid: 'MZ1',
      callSid: 'CA1',
      tracks: ['inbound'],
      customParameters: token ? { token } : {},
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
}

async function closeOf(url: string, message: string): Promise<{ code: number; reason: string }> {
  const ws = new WebSocket(url);
  await once(ws, 'open');
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  ws.send(message);
  const [code, reason] = (await once(ws, 'close')) as [number, Buffer];
  return { code, reason: reason.toString() };
}

describe('all roles in one process', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform(embedded!, { env: { ROLES: 'api,gateway,worker' } });
  });
  after(() => p.close());

  test('the gateway listens on its own port, native uWS, with health', async () => {
    assert.ok(p.platform.gatewayUrl);
    const health = await fetch(`${p.platform.gatewayUrl!.replace('ws:', 'http:')}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { native: boolean }).native, true);
  });

  test('a stream without a token is closed with 4001; a valid one-time token for an unknown call is ended', async () => {
    const media = `${p.platform.gatewayUrl}/media/twilio`;
    assert.equal((await closeOf(media, twilioStart(undefined))).code, 4001);
    const secret = readFileSync(path.join(p.dataDir, 'secret.key'), 'utf8').trim();
    const tokens = new StreamTokens({ secret, claims: new MemoryTokenClaims() });
    const token = tokens.mint('call_01JAAAAAAAAAAAAAAAAAAAAAAA', 'twilio', 60_000);
    const ended = await closeOf(media, twilioStart(token));
    assert.equal(ended.code, 1000);
    assert.equal((await closeOf(media, twilioStart(token))).code, 4005, 'the token works once');
  });
});
