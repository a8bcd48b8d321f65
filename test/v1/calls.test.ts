/**
 * A call placed through v1, end to end on the embedded defaults (api, gateway and worker roles in one process,
 * the sandbox carrier): it completes, is the same call through `GET /v2/calls/{id}`, and sends its v1 webhooks
 * to a local HTTPS receiver that checks `x-signature` on its own (HMAC-SHA256 of the raw body with the
 * organization private key), with `metadata` echoed and `credits` equal to the wallet.
 */
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeCertificates, type TestCertificates } from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { V1_HOST, type V1Keys, v1Client } from './support.ts';

interface Received {
  body: Buffer;
  signature: string | undefined;
  publicKey: string | undefined;
}

interface V1Webhook {
  event: {
    type: string;
    data: {
      call: { id: string; status: string; durationSeconds: number; recordingUrl: string | null };
      credits: { used: number; available: number };
    };
  };
  metadata?: unknown;
}

/** A customer's v1 endpoint: keeps every request's raw bytes and headers, answers 200. */
async function startReceiver(certs: TestCertificates) {
  const received: Received[] = [];
  const server = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks),
        signature: req.headers['x-signature'] as string | undefined,
        publicKey: req.headers['x-public-key'] as string | undefined,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: `https://localhost:${(server.address() as AddressInfo).port}/v1-hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a v1 integration does with a delivery: recompute the HMAC over the raw bytes, compare in constant time. */
function signatureValid(body: Buffer, signature: string | undefined, privateKey: string): boolean {
  if (!signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', privateKey).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

describe('a call placed through v1, end to end (sqlite+memory)', {
  skip: !SphinxTranscriber.available() && 'PocketSphinx is not installed',
}, () => {
  let certs: TestCertificates;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let p: TestPlatform;
  let keys: V1Keys;
  let v1: ReturnType<typeof v1Client>;
  let v2: ReturnType<typeof client>;

  before(async () => {
    certs = makeCertificates();
    receiver = await startReceiver(certs);
    p = await startTestPlatform(
      { name: 'sqlite+memory' },
      {
        env: {
          ROLES: 'api,gateway,worker',
          V1_HOST,
          ALLOW_PRIVATE_WEBHOOKS: '1',
          WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
          SANDBOX_RING_MS: '1500',
        },
        webhookCa: certs.caPem,
      },
    );
    const workspace = await provisionWorkspace(p.platform.store, {
      name: 'Shop',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    keys = workspace.v1;
    v1 = v1Client(p.url, keys);
    v2 = client(p.url, workspace.api_key);
  });

  after(async () => {
    await p?.close();
    await receiver?.close();
    certs?.cleanup();
  });

  test('completes, reads as a v2 call, and sends signed v1 webhooks with metadata and credits', async () => {
    const created = await v1<{ data: { _id: string } }>('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'Order confirmation',
        variant: {
          type: 'order_confirmation',
          config: { order_confirmation: { supportContacts: { phoneNumber: '+911800123456' } } },
        },
        agent: {
          identity: { name: 'Asha', gender: 'female' },
          firstMessage: 'Hello {{customerName}}, this is Asha.',
        },
        callSettings: { maxCallDuration: 60 },
      },
    });
    assert.equal(created.status, 201, created.text);
    const metadata = { crmId: 'lead-77', tags: ['diwali'] };
    // The sandbox callee of a number ending in 4 picks up and hangs up after about 2 s.
    const initiated = await v1<{ callId: string; status: string }>('POST', '/v2/call/initiate', {
      body: {
        phoneNumber: '+919876543214',
        assistant: created.body.data._id,
        callbackUrl: receiver.url,
        payload: { customerName: 'Ravi', orderId: 'KK-1001' },
        metadata,
      },
    });
    assert.equal(initiated.status, 200, initiated.text);
    const callId = initiated.body.callId;

    const webhooks = (): Array<{ raw: Received; parsed: V1Webhook }> =>
      receiver.received.map((raw) => ({ raw, parsed: JSON.parse(raw.body.toString('utf8')) as V1Webhook }));
    const deadline = Date.now() + 60_000;
    while (!webhooks().some((w) => w.parsed.event.type === 'end-of-call') && Date.now() < deadline)
      await sleep(200);

    const call = await v2<{ status: string; cost: { amount_inr: number }; duration_secs: number }>(
      'GET',
      `/v2/calls/${callId}`,
    );
    assert.equal(call.status, 200, call.text);
    assert.equal(call.body.status, 'completed', call.text);

    const all = webhooks();
    const types = all.map((w) => w.parsed.event.type);
    for (const type of [
      'call.initiate',
      'call.ringing',
      'call.in-progress',
      'call.completed',
      'call.ended',
      'end-of-call',
    ])
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    for (const { raw, parsed } of all) {
      assert.ok(
        signatureValid(raw.body, raw.signature, keys.private_key),
        `x-signature of ${parsed.event.type}`,
      );
      assert.equal(raw.publicKey, keys.public_key);
      assert.deepEqual(parsed.metadata, metadata);
      assert.equal(parsed.event.data.call.id, callId);
    }
    const end = all.find((w) => w.parsed.event.type === 'end-of-call')?.parsed.event.data;
    assert.ok(end);
    assert.equal(end.call.status, 'completed');
    assert.equal(end.call.durationSeconds, call.body.duration_secs);
    assert.equal(end.credits.used, call.body.cost.amount_inr);
    const wallet = await v2<{ available_inr: number }>('GET', '/v2/wallet');
    assert.equal(end.credits.available, wallet.body.available_inr);
    // A forged body does not verify.
    const first = all[0];
    assert.ok(
      first &&
        !signatureValid(Buffer.from(`${first.raw.body.toString()} `), first.raw.signature, keys.private_key),
    );
  });

  test('a browser call through v1: what the browser joins with, and abort', async () => {
    const created = await v1<{ data: { _id: string } }>('POST', '/v1/admin/assistant/create', {
      body: { name: 'Web', variant: { type: 'order_confirmation' } },
    });
    const web = await v1<{
      callId: string;
      status: string;
      data: { web: { url: string; token: string; expiresAt: string; pageUrl: string } };
    }>('POST', '/v2/call/web', {
      body: { assistant: created.body.data._id, payload: { customerName: 'Ravi' } },
    });
    assert.equal(web.status, 200, web.text);
    assert.match(web.body.data.web.url, new RegExp(`/web/${web.body.callId}\\?token=`));
    assert.ok(web.body.data.web.token.length > 0);
    const asV2 = await v2<{ channel: string }>('GET', `/v2/calls/${web.body.callId}`);
    assert.equal(asV2.body.channel, 'web');
    const aborted = await v1<{ status: string }>('POST', '/v2/call/abort', {
      body: { callId: web.body.callId },
    });
    assert.equal(aborted.body.status, 'aborted');
  });
});
