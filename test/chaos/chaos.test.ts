/**
 * The chaos suite: the scaled-out deployment (api, two gateways behind a balancer, worker) on PostgreSQL and a
 * redis-server of its own, placing two dozen short sandbox calls with webhooks to a local receiver while a
 * seeded schedule (the seed is printed) restarts Redis with its state lost, cuts PostgreSQL for a few seconds,
 * and SIGKILLs the worker and a gateway, each at a random moment. PostgreSQL is CI's shared server: the suite
 * reaches it through a loopback TCP proxy and cuts the proxy, never the server. Each seed is one round on the
 * same deployment (killed nodes are started again between rounds), with a workspace of its own.
 *
 * Afterwards: every call has exactly one terminal status and one terminal event; calls the killed gateway did
 * not run ended by their own rules, not `failed` by the fault; the wallet's balance is the start minus the sum
 * of the calls' costs, nothing held; no call is stuck live; every event was delivered or dead-lettered, none
 * sent twice with different bodies.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { auditWorkspace, brokenInvariants } from '../support/audit.ts';
import { client, errorCode } from '../support/platform.ts';
import { RedisServer, redisServerAvailable } from '../support/redis-server.ts';
import { postgresUrl, redisUrl } from '../support/services.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { startTopology, type Topology } from '../support/topology.ts';

const databaseUrl = await postgresUrl();
const sharedRedis = await redisUrl();
const SEEDS = (process.env.CHAOS_SEEDS ?? '1,2').split(',').map(Number);
const START_PAISE = 200_000;
const CALLS_PER_ROUND = 20;
/** Faults fall within this long after the first call is placed. */
const FAULT_WINDOW_MS = 12_000;
const LIVE = new Set(['queued', 'dialing', 'in_progress']);

/** A small seeded generator (mulberry32): the same seed, the same schedule. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The nodes that are not running (a restart that exited), with the end of their output, for a failure. */
function stoppedNodes(topology: Topology): string {
  return topology.nodes
    .filter((node) => node.child.exitCode !== null || node.child.signalCode !== null)
    .map((node) => `\n${node.name} is not running:\n${node.output.join('').slice(-2_000)}`)
    .join('');
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

type Fault = 'redis-restart' | 'postgres-cut' | 'kill-worker' | 'kill-gateway';

describe('chaos: kills and outages under live calls (separate processes, postgres, own redis)', {
  skip:
    (!(databaseUrl && sharedRedis) && 'DATABASE_URL and REDIS_URL are not both set') ||
    (!redisServerAvailable() && 'redis-server is not installed'),
}, () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let topology: Topology;
  let certs: TestCertificates;
  let receiver: WebhookReceiver;
  let noSpeechToText: string;
  const secrets: string[] = [];

  before(async () => {
    redis = await RedisServer.start();
    const target = new URL(databaseUrl as string);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(databaseUrl as string);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.listeningPort);
    certs = makeCertificates();
    receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
    noSpeechToText = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-nostt-'));
    topology = await startTopology(
      { databaseUrl: viaProxy.toString(), redisUrl: redis.url },
      {
        SANDBOX_RING_MS: '1500',
        LIVE_CALL_LEASE_MS: '3000',
        ALLOW_PRIVATE_WEBHOOKS: '1',
        WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
        NODE_EXTRA_CA_CERTS: certs.caFile,
        // Short calls that take turns by voice activity: what is under test is the platform's bookkeeping.
        PATH: noSpeechToText,
        SPHINX_MODEL_DIR: noSpeechToText,
      },
    );
  });

  after(async () => {
    await proxy?.restore();
    await topology?.close();
    await receiver?.close();
    await proxy?.close();
    await redis?.stop();
    if (noSpeechToText) rmSync(noSpeechToText, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    test(`seed ${seed}: money, calls and events stay exact`, async (t) => {
      const next = random(seed);
      const faults: Array<{ fault: Fault; atMs: number }> = (
        ['redis-restart', 'postgres-cut', 'kill-worker', 'kill-gateway'] as const
      )
        .map((fault) => ({ fault, atMs: Math.round(next() * FAULT_WINDOW_MS) }))
        .sort((a, b) => a.atMs - b.atMs);
      const victim = next() < 0.5 ? 'gateway-a' : 'gateway-b';
      t.diagnostic(
        `seed ${seed}: ${faults.map((f) => `${f.fault}@${f.atMs}ms`).join(', ')}; gateway killed: ${victim}`,
      );
      console.log(`chaos seed ${seed}: ${JSON.stringify(faults)} victim=${victim}`);

      const workspace = await provisionWorkspace(topology.store, {
        name: `Chaos ${seed}`,
        mode: 'sandbox',
        balancePaise: START_PAISE,
      });
      secrets.push(workspace.webhook_secret);
      const api = client(topology.url, workspace.api_key);
      const agent = await api<{ id: string }>('POST', '/v2/agents', {
        body: {
          name: 'Asha',
          system_prompt: 'You are Asha from Acme.',
          first_message: 'Hello, this is Asha.',
          voice: { voice_id: 'local-en-female' },
          max_duration_secs: 30,
        },
      });
      assert.equal(agent.status, 201, agent.text);

      // Mostly callees that answer and hang up after 2 s; some busy, unanswered and carrier-failed ones.
      const digits = ['4', '4', '4', '4', '0', '1', '5', '4'];
      const started = Date.now();
      const placing = (async () => {
        const ids: string[] = [];
        for (let i = 0; i < CALLS_PER_ROUND; i++) {
          const to = `+9198765${String(seed).padStart(2, '0')}${String(i).padStart(2, '0')}${digits[i % digits.length]}`;
          // As the interface asks of every client: retries carry the request's Idempotency-Key, so a call whose
          // commit went through as the database was cut is answered, not placed twice.
          const idempotencyKey = `chaos-${seed}-${i}`;
          for (;;) {
            const response = await api<{ id: string }>('POST', '/v2/calls', {
              body: { to, agent_id: agent.body.id, webhook_url: receiver.url() },
              headers: { 'Idempotency-Key': idempotencyKey },
            });
            if (response.status === 202) {
              ids.push(response.body.id);
              break;
            }
            // The database may be cut right now: the API says so (503, or 409 while the first attempt's claim on
            // the key is still held), and the client retries.
            const apiLog = () =>
              (topology.nodes.find((node) => node.name === 'api')?.output ?? [])
                .filter((line) => line.includes('request failed'))
                .join('')
                .slice(-3_000);
            const retryable =
              response.status === 503 ||
              (response.status === 409 && errorCode(response) === 'duplicate_call');
            assert.ok(retryable, `${response.status} ${response.text}\n${apiLog()}`);
            await sleep(250);
          }
          await sleep(300);
        }
        return ids;
      })();

      // The worker's supervisor starts it again a second after it died, while the schedule goes on.
      const supervised: Array<Promise<void>> = [];
      const injecting = (async () => {
        for (const { fault, atMs } of faults) {
          const wait = started + atMs - Date.now();
          if (wait > 0) await sleep(wait);
          switch (fault) {
            case 'redis-restart':
              await redis.restart(1_500);
              break;
            case 'postgres-cut':
              await proxy.cut();
              await sleep(3_000);
              await proxy.restore();
              break;
            case 'kill-worker':
              await topology.kill('worker');
              supervised.push(sleep(1_000).then(() => topology.restart('worker')));
              break;
            case 'kill-gateway':
              await topology.kill(victim);
              break;
          }
        }
      })();
      // Every fault runs its course (and the database is back) even when placing failed, so the next seed
      // starts on a whole deployment.
      const [placed, injected] = await Promise.allSettled([placing, injecting]);
      const placedAt = Date.now() - started;
      // The killed gateway comes back for the next round (its calls are recovery's by now or soon).
      const restarting = Promise.all([topology.restart(victim), ...supervised]);
      if (placed.status === 'rejected' || injected.status === 'rejected') {
        await restarting.catch(() => {});
        throw placed.status === 'rejected' ? placed.reason : (injected as PromiseRejectedResult).reason;
      }
      const ids = placed.value;

      // Every call ends: by its own rules, or by recovery for the killed gateway's.
      const deadline = Date.now() + 90_000;
      for (const id of ids) {
        for (;;) {
          const response = await api<{ status: string }>('GET', `/v2/calls/${id}`);
          if (response.status === 200 && !LIVE.has(response.body.status)) break;
          if (Date.now() > deadline)
            assert.fail(`call ${id} stayed ${response.body.status}${stoppedNodes(topology)}`);
          await sleep(250);
        }
      }
      const endedAt = Date.now() - started;
      await restarting;
      // Webhooks settle: nothing pending (delivered, or dead-lettered by the short schedule).
      const schema = topology.schema;
      let audit = await auditWorkspace(databaseUrl as string, schema, workspace.workspace_id);
      while ((audit.eventStatuses.get('pending') ?? 0) > 0 && Date.now() < deadline + 30_000) {
        await sleep(500);
        audit = await auditWorkspace(databaseUrl as string, schema, workspace.workspace_id);
      }
      assert.equal(audit.calls.length, ids.length);
      const broken = brokenInvariants(audit, START_PAISE, receiver.requests);
      for (const call of audit.calls) {
        const faultEnded = call.status === 'failed' && call.endedReason === 'pipeline-error';
        if (faultEnded && call.gatewayNode !== null && call.gatewayNode !== victim)
          broken.push(`${call.id} on surviving ${call.gatewayNode} ended failed by the fault`);
      }
      const tally = new Map<string, number>();
      for (const call of audit.calls) {
        const key = `${call.status}/${call.endedReason}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
      }
      console.log(
        `chaos seed ${seed}: ${ids.length} calls ${JSON.stringify(Object.fromEntries(tally))}; events ${JSON.stringify(Object.fromEntries(audit.eventStatuses))}; charged ${audit.capturedPaise} paise; placed by ${secs(placedAt)}, every call ended by ${secs(endedAt)}, settled by ${secs(Date.now() - started)}`,
      );
      assert.deepEqual(broken, []);
    });
  }
});
