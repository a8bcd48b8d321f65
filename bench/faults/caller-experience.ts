/**
 * `npm run bench:faults` (bench/faults/caller-experience.ts): what a caller hears during each fault the chaos suite injects, measured from the
 * call's audio. On the scaled-out deployment (api, two gateways behind a balancer, worker; PostgreSQL through a
 * loopback proxy this script cuts, a redis-server of its own; needs DATABASE_URL and redis-server), one web call
 * per fault: the agent speaks a long opening (about 20 s), the caller listens as a browser does
 * (bench/conversation/web-caller.ts), and 2 s into the agent's audio the fault strikes. One line per fault: the
 * longest gap in the agent's audio while it spoke (the line `none` is the same call without a fault, so its
 * figure is the opening's own pauses), how much of the opening was heard, whether the call dropped, and how it
 * ended. A web caller is a browser, not the sandbox's simulated phone callee, which lives in the worker process
 * and so dies with it; a real phone call's media never passes through the worker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { RedisServer, redisServerAvailable } from '../../test/support/redis-server.ts';
import { postgresUrl } from '../../test/support/services.ts';
import { TcpProxy } from '../../test/support/tcp-proxy.ts';
import { startTopology, type Topology } from '../../test/support/topology.ts';
import { type Interval, WebCaller } from '../conversation/web-caller.ts';
import { Cleanups } from '../support/cleanups.ts';

type Fault = 'none' | 'redis-restart' | 'postgres-cut' | 'worker-kill' | 'gateway-kill';
const FAULTS: readonly Fault[] = ['none', 'redis-restart', 'postgres-cut', 'worker-kill', 'gateway-kill'];

const OPENING =
  'Hello Ravi, this is Asha calling from Acme about your table booking for this weekend. ' +
  'We have a table for four on Saturday at eight in the evening, near the window, as you asked. ' +
  'The chef has a tasting menu that night, with a vegetarian choice for every course. ' +
  'If you would like a cake for the birthday, we can have one ready, chocolate or mango. ' +
  'Parking is free after seven, and the entrance is on the side street next to the bank.';
/** When, in the agent's audio, the fault strikes. */
const FAULT_AFTER_AUDIO_MS = 2_000;
const REDIS_DOWN_MS = 1_500;
const POSTGRES_CUT_MS = 3_000;
/** Silence after the opening that says the agent has finished speaking. */
const DONE_QUIET_MS = 2_500;
const LIVE = new Set(['queued', 'dialing', 'in_progress']);

interface Outcome {
  fault: Fault;
  longestGapMs: number;
  heardMs: number;
  dropped: boolean;
  status: string;
}

const cleanups = new Cleanups((line) => process.stderr.write(`${line}\n`));

async function main(): Promise<void> {
  const databaseUrl = await postgresUrl();
  if (!databaseUrl || !redisServerAvailable()) {
    process.stderr.write('bench:faults needs DATABASE_URL (PostgreSQL) and redis-server\n');
    process.exitCode = 1;
    return;
  }
  const redis = await RedisServer.start();
  cleanups.defer('stop redis-server', () => redis.stop());
  const target = new URL(databaseUrl);
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  cleanups.defer('close the PostgreSQL proxy', () => proxy.close());
  const viaProxy = new URL(databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.listeningPort);
  const noSpeechToText = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-nostt-'));
  cleanups.defer('remove the empty PATH', () => rmSync(noSpeechToText, { recursive: true, force: true }));
  const topology = await startTopology(
    { databaseUrl: viaProxy.toString(), redisUrl: redis.url },
    // The caller only listens: no speech recognition needed. Short leases, as the chaos suite has them.
    { LIVE_CALL_LEASE_MS: '3000', PATH: noSpeechToText, SPHINX_MODEL_DIR: noSpeechToText },
  );
  cleanups.defer('stop the deployment', () => topology.close());
  const workspace = await provisionWorkspace(topology.store, {
    name: 'Faults bench',
    mode: 'sandbox',
    balancePaise: 100_000,
  });
  const api = (method: string, pathname: string, body?: unknown) =>
    fetch(`${topology.url}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${workspace.api_key}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const agent = (await (
    await api('POST', '/v2/agents', {
      name: 'Asha',
      first_message: OPENING,
      voice: { voice_id: 'local-en-female' },
      max_duration_secs: 120,
      behavior: { silence_reprompt_secs: 0 },
    })
  ).json()) as { id: string };

  for (const fault of FAULTS) {
    const outcome = await oneCall(topology, { redis, proxy }, api, agent.id, fault);
    process.stdout.write(`${line(outcome)}\n`);
  }
}

async function oneCall(
  topology: Topology,
  services: { redis: RedisServer; proxy: TcpProxy },
  api: (method: string, pathname: string, body?: unknown) => Promise<Response>,
  agentId: string,
  fault: Fault,
): Promise<Outcome> {
  const placed = await api('POST', '/v2/calls', { channel: 'web', agent_id: agentId });
  const call = (await placed.json()) as { id: string; web?: { url?: string } };
  if (!call.web?.url) throw new Error(`placing the web call answered ${placed.status}`);
  const caller = await WebCaller.join(call.web.url, 30_000);
  await caller.heardAtLeast(FAULT_AFTER_AUDIO_MS, 30_000);
  const restarts = await strike(topology, services, fault, call.id);
  let dropped = false;
  try {
    await caller.quietAfterFirstTurn(DONE_QUIET_MS, 90_000);
  } catch {
    dropped = caller.record.closeCode !== null;
  }
  const heard = [...caller.record.heard];
  await caller.hangUp();
  await restarts;
  return {
    fault,
    longestGapMs: longestGap(heard),
    heardMs: heard.reduce((sum, i) => sum + (i.endMs - i.startMs), 0),
    dropped,
    status: await finalStatus(api, call.id),
  };
}

/** Injects the fault; resolves at once with what brings the deployment back whole (awaited after the call). */
async function strike(
  topology: Topology,
  { redis, proxy }: { redis: RedisServer; proxy: TcpProxy },
  fault: Fault,
  callId: string,
): Promise<Promise<unknown>> {
  switch (fault) {
    case 'none':
      return Promise.resolve();
    case 'redis-restart':
      return redis.restart(REDIS_DOWN_MS);
    case 'postgres-cut':
      await proxy.cut();
      return sleep(POSTGRES_CUT_MS).then(() => proxy.restore());
    case 'worker-kill':
      await topology.kill('worker');
      return sleep(1_000).then(() => topology.restart('worker'));
    case 'gateway-kill': {
      const node = (await topology.store.calls.findById(callId))?.gatewayNode;
      if (!node) throw new Error('the call has no gateway');
      await topology.kill(node);
      return sleep(1_000).then(() => topology.restart(node));
    }
  }
}

/** The longest silence between two stretches of agent audio the caller heard. */
function longestGap(heard: readonly Interval[]): number {
  let longest = 0;
  for (let i = 1; i < heard.length; i++)
    longest = Math.max(longest, (heard[i] as Interval).startMs - (heard[i - 1] as Interval).endMs);
  return longest;
}

async function finalStatus(
  api: (method: string, pathname: string) => Promise<Response>,
  callId: string,
): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const call = (await (await api('GET', `/v2/calls/${callId}`)).json()) as {
      status?: string;
      ended_reason?: string;
    };
    if (call.status && !LIVE.has(call.status)) return `${call.status}/${call.ended_reason}`;
    if (Date.now() > deadline) return `${call.status ?? 'unknown'} after 60 s`;
    await sleep(250);
  }
}

function line(o: Outcome): string {
  return [
    `${o.fault.padEnd(14)}`,
    `longest_gap_ms=${Math.round(o.longestGapMs)}`.padEnd(22),
    `heard_ms=${Math.round(o.heardMs)}`.padEnd(16),
    `dropped=${o.dropped ? 'yes' : 'no'}`.padEnd(12),
    `ended=${o.status}`,
  ].join(' ');
}

try {
  await main();
} finally {
  await cleanups.runAll();
}
