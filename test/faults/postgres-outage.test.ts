/**
 * Faults the platform survives: PostgreSQL unreachable for a few seconds. The platform (api, gateway and worker
 * in one process) reaches PostgreSQL through a loopback proxy that this suite cuts and restores (the shared
 * server is never stopped). While it is cut, the API answers 503 in the error envelope with Retry-After, not
 * 500; once it is back, the API answers again by itself. Calls that end while it is cut are settled once it is
 * back, exactly once, and their webhooks delivered exactly once, as are webhooks delivered while it was cut.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { auditWorkspace, brokenInvariants } from '../support/audit.ts';
import { client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { postgresUrl } from '../support/services.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const databaseUrl = await postgresUrl();
const START_PAISE = 100_000;

/** The platform's log, kept so the suite knows when a call's settlement is waiting for the database. */
const logged: string[] = [];
const logLines = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logged.push(chunk.toString());
    done();
  },
});

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  ended_at: string | null;
}

describe('a PostgreSQL outage of a few seconds', { skip: !databaseUrl && 'DATABASE_URL is not set' }, () => {
  let proxy: TcpProxy;
  let platform: TestPlatform;
  let certs: TestCertificates;
  let receiver: WebhookReceiver;
  let api: ReturnType<typeof client>;
  let workspaceId: string;
  let agentId: string;

  before(async () => {
    const target = new URL(databaseUrl as string);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(databaseUrl as string);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.listeningPort);
    certs = makeCertificates();
    const secrets: string[] = [];
    receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
    platform = await startTestPlatform(
      { name: 'postgres', databaseUrl: viaProxy.toString() },
      {
        env: {
          ROLES: 'api,gateway,worker',
          ALLOW_PRIVATE_WEBHOOKS: '1',
          WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
          SANDBOX_RING_MS: '1500',
        },
        webhookCa: certs.caPem,
        logger: pino({ level: 'warn' }, logLines),
      },
    );
    const workspace = await provisionWorkspace(platform.platform.store, {
      name: 'Outage',
      mode: 'sandbox',
      balancePaise: START_PAISE,
    });
    secrets.push(workspace.webhook_secret);
    workspaceId = workspace.workspace_id;
    api = client(platform.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha from Acme.',
        first_message: 'Hello, this is Asha from Acme.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 60,
        // A silent caller is checked on after 2 s and the call ends after one unanswered check: a few seconds.
        behavior: { silence_reprompt_secs: 2 },
        end_call: { enabled: true, after_silence_reprompts: 1 },
      },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
  });

  after(async () => {
    if (process.env.FAULTS_LOG_FILE)
      (await import('node:fs')).writeFileSync(process.env.FAULTS_LOG_FILE, logged.join(''));
    await proxy?.restore();
    await platform?.close();
    await receiver?.close();
    await proxy?.close();
  });

  async function untilApiAnswers(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const response = await api('GET', '/v2/agents');
      if (response.status === 200) return;
      assert.equal(response.status, 503, response.text);
      if (Date.now() > deadline) assert.fail('the API did not recover after the database came back');
      await sleep(100);
    }
  }

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
    await untilApiAnswers();
  });

  test('calls that end while the database is away are settled once after it, their webhooks delivered once', async () => {
    // The receiver holds the first `call.started` a while: the outage begins while it is being delivered, so
    // its record waits for the database. The callees (ending in 3) stay silent, so the agent checks on them
    // and hangs up some seconds after answering: inside the outage, which lasts until a settlement waits.
    receiver.misbehave({ delayMs: 3_000 });
    const before = receiver.arrived;
    const placed: CallBody[] = [];
    for (const digit of ['1', '2']) {
      const response = await api<CallBody>('POST', '/v2/calls', {
        body: { to: `+9198765430${digit}3`, agent_id: agentId, webhook_url: receiver.url() },
      });
      assert.equal(response.status, 202, response.text);
      placed.push(response.body);
    }
    // Both calls answered (their `call.started` on its way), the first one's delivery still held.
    await receiver.waitForArrival(before + placed.length);
    await proxy.cut();
    const cutAt = Date.now();
    // The outage lasts until an ended call's settlement has found the database away.
    const from = logged.length;
    const waiting = () =>
      logged.slice(from).some((line) => line.includes('database unreachable: retrying until it is back'));
    const limit = Date.now() + 60_000;
    while (!waiting()) {
      if (Date.now() > limit) assert.fail('no call ended during the outage');
      await sleep(100);
    }
    await sleep(1_000);
    const restoredAt = Date.now();
    await proxy.restore();
    await untilApiAnswers();

    const ended: CallBody[] = [];
    for (const call of placed) {
      for (;;) {
        const { body } = await api<CallBody>('GET', `/v2/calls/${call.id}`);
        if (!['queued', 'dialing', 'in_progress'].includes(body.status)) {
          ended.push(body);
          break;
        }
        if (Date.now() > restoredAt + 30_000) assert.fail(`call ${call.id} stayed ${body.status}`);
        await sleep(100);
      }
    }
    for (const call of ended) assert.equal(call.status, 'completed', JSON.stringify(call));
    const endedInOutage = ended.filter((call) => {
      const endedAt = Date.parse(call.ended_at ?? '');
      return endedAt > cutAt && endedAt < restoredAt;
    });
    assert.ok(endedInOutage.length >= 1, `a call ended during the outage: ${JSON.stringify(ended)}`);

    // Every event delivered: the receiver has each call's start and end, once each.
    const expected = placed.length * 2;
    const until = Date.now() + 30_000;
    while (receiver.processed.size < expected && Date.now() < until) await sleep(100);
    // An attempt that reached the receiver while the database was away records itself when the database is
    // back, at its next try (the record's retries back off to 2 s apart): wait for the records, not a fixed time.
    const audited = () =>
      auditWorkspace(databaseUrl as string, platform.databaseSchema as string, workspaceId);
    let audit = await audited();
    while (audit.eventStatuses.get('delivered') !== expected && Date.now() < until) {
      await sleep(200);
      audit = await audited();
    }
    await sleep(1_000);
    audit = await audited();
    assert.deepEqual(brokenInvariants(audit, START_PAISE, receiver.requests), []);
    assert.equal(audit.eventStatuses.get('delivered'), expected, JSON.stringify([...audit.eventStatuses]));
    const deliveries = new Map<string, number>();
    for (const request of receiver.requests.filter((r) => r.answered === 200 && r.id)) {
      deliveries.set(request.id as string, (deliveries.get(request.id as string) ?? 0) + 1);
    }
    assert.equal(deliveries.size, expected);
    assert.deepEqual(
      [...deliveries].filter(([, times]) => times !== 1),
      [],
      'each event was delivered once, none again after the database came back',
    );
    assert.ok(audit.capturedPaise > 0, 'the completed calls were billed');
  });
});
