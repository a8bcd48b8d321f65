/**
 * Graceful shutdown, black box: `voiceagent serve` (api, gateway and worker in one process) is started as an
 * operator starts it and stopped with real signals while sandbox calls are live. Calls that end by their own rules
 * inside the drain window settle as usual; the rest end `failed` with `node-shutdown`, free, with one terminal
 * webhook and one log line each. A second signal ends the calls at once instead of waiting for the window. In the
 * multi-process deployment, a draining gateway gets no new calls: they go to the other gateway.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { openConfiguredStore } from '../../cli/store.ts';
import { loadConfig } from '../../core/config.ts';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { backends, client } from '../support/platform.ts';
import { startTopology, type Topology } from '../support/topology.ts';

const BIN = fileURLToPath(new URL('../../bin/voiceagent.js', import.meta.url));

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  duration_secs: number;
  cost: { amount_inr: number };
}

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

interface Server {
  child: ChildProcess;
  url: string;
  logs(): LogLine[];
  exited: Promise<number | null>;
}

/** Numbers of the sandbox carrier: the callee stays silent (live until stopped), or hangs up after 2 s. */
const SILENT = '+919876543213';
const HANGS_UP = '+919876543214';

describe('graceful shutdown drains live calls', {
  skip: !SphinxTranscriber.available() && 'PocketSphinx is not installed',
}, () => {
  let certs: TestCertificates;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const secrets: string[] = [];
  const running: ChildProcess[] = [];

  before(async () => {
    certs = makeCertificates();
    receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-drain-'));
  });

  after(async () => {
    for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
    await receiver?.close();
    certs?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function serve(drainMs: number): Promise<Server> {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        GATEWAY_PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        ALLOW_PRIVATE_WEBHOOKS: '1',
        NODE_EXTRA_CA_CERTS: certs.caFile,
        WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800',
        SHUTDOWN_DRAIN_MS: String(drainMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.push(child);
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      out += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const match = /Control API: (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        const url = match[1];
        const logs = () =>
          out
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as LogLine);
        return { child, url, logs, exited };
      }
      if (child.exitCode !== null || Date.now() > deadline) assert.fail(`serve did not start:\n${out}`);
      await sleep(100);
    }
  }

  function credentials(): { api_key: string; webhook_secret: string } {
    return JSON.parse(readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
  }

  async function placeLive(server: Server, numbers: string[]): Promise<string[]> {
    const api = client(server.url, credentials().api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        first_message: 'Hello, this is Asha from Acme.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 600,
      },
    });
    assert.equal(agent.status, 201, agent.text);
    const ids: string[] = [];
    for (const to of numbers) {
      const placed = await api<CallBody>('POST', '/v2/calls', {
        body: { to, agent_id: agent.body.id, webhook_url: receiver.url() },
      });
      assert.equal(placed.status, 202, placed.text);
      ids.push(placed.body.id);
    }
    for (const id of ids) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
        if (body.status === 'in_progress') break;
        assert.ok(Date.now() < deadline && ['queued', 'dialing'].includes(body.status), JSON.stringify(body));
        await sleep(100);
      }
    }
    return ids;
  }

  async function calls(ids: string[]) {
    const store = await openConfiguredStore(loadConfig({ DATA_DIR: dataDir }));
    try {
      const ws = (await store.calls.findById(ids[0] ?? ''))?.workspaceId ?? '';
      return await Promise.all(
        ids.map(async (id) => {
          const call = await store.calls.get(ws, id);
          const events = await store.events.listForCall(ws, id);
          return { call, events: events.map((e) => e.type).sort() };
        }),
      );
    } finally {
      await store.close();
    }
  }

  /** Terminal webhooks the receiver verified, per call. */
  function delivered(id: string): string[] {
    return [...receiver.processed.values()]
      .map((raw) => JSON.parse(raw.toString('utf8')) as { type: string; data: { call: { id: string } } })
      .filter((event) => event.data.call.id === id)
      .map((event) => event.type)
      .sort();
  }

  const endedLines = (server: Server, id: string) =>
    server.logs().filter((line) => line.msg === 'call ended' && line.call_id === id);

  test('SIGTERM: calls that end inside the window settle by their own rules; the rest fail as node-shutdown, free', async () => {
    const first = await serve(8_000);
    secrets.push(credentials().webhook_secret);
    const [silent, hangsUp] = (await placeLive(first, [SILENT, HANGS_UP])) as [string, string];
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    const [ended, completed] = await calls([silent, hangsUp]);
    assert.equal(ended?.call?.status, 'failed');
    assert.equal(ended?.call?.endedReason, 'node-shutdown');
    assert.equal(ended?.call?.costPaise, 0);
    assert.deepEqual(ended?.events, ['call.failed', 'call.started']);
    assert.equal(completed?.call?.status, 'completed');
    assert.equal(completed?.call?.endedReason, 'customer-ended-call');
    assert.ok((completed?.call?.costPaise ?? 0) > 0, 'a call that ended by its own rules is billed');
    assert.deepEqual(completed?.events, ['call.completed', 'call.started']);

    const lines = endedLines(first, silent);
    assert.equal(lines.length, 1, 'one log line for the call ended at shutdown');
    assert.deepEqual(
      Object.keys(lines[0] ?? {}).filter((k) =>
        ['call_id', 'status', 'ended_reason', 'duration_secs', 'cost_inr', 'v2v_p50_ms'].includes(k),
      ),
      ['call_id', 'status', 'ended_reason', 'duration_secs', 'cost_inr', 'v2v_p50_ms'],
    );
    assert.equal(lines[0]?.ended_reason, 'node-shutdown');
    assert.equal(lines[0]?.cost_inr, 0);
    assert.equal(endedLines(first, hangsUp).length, 1);

    // The node comes back: events written at shutdown and not yet sent are delivered, once each.
    const second = await serve(8_000);
    const deadline = Date.now() + 30_000;
    while ((delivered(silent).length < 2 || delivered(hangsUp).length < 2) && Date.now() < deadline)
      await sleep(100);
    assert.deepEqual(delivered(silent), ['call.failed', 'call.started']);
    assert.deepEqual(delivered(hangsUp), ['call.completed', 'call.started']);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });

  test('a second signal ends the live calls at once, settled the same way', async () => {
    const window = 300_000;
    const server = await serve(window);
    const ids = await placeLive(server, [SILENT, SILENT]);
    server.child.kill('SIGTERM');
    const deadline = Date.now() + 30_000;
    while (!server.logs().some((line) => line.live_calls === 2) && Date.now() < deadline) await sleep(50);
    assert.ok(
      server.logs().some((line) => line.live_calls === 2),
      'the drain starts with both calls live',
    );
    // A signal within a second of the one before is the same one (npm forwards Ctrl-C to its child too).
    await sleep(1_500);
    const stoppedAt = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.ok(Date.now() - stoppedAt < window / 10, 'did not wait for the drain window');

    for (const { call, events } of await calls(ids)) {
      assert.equal(call?.status, 'failed');
      assert.equal(call?.endedReason, 'node-shutdown');
      assert.equal(call?.costPaise, 0);
      assert.deepEqual(events, ['call.failed', 'call.started']);
    }
    for (const id of ids) assert.equal(endedLines(server, id).length, 1);
  });
});

const scaledOut = (await backends()).find((b) => b.databaseUrl && b.redisUrl);

describe('a draining gateway gets no new calls (1 api, 2 gateways, 1 worker)', {
  skip:
    (!scaledOut && 'needs DATABASE_URL and REDIS_URL') ||
    (!SphinxTranscriber.available() && 'PocketSphinx is not installed'),
}, () => {
  let topology: Topology;
  let api: ReturnType<typeof client>;
  let agentId: string;

  before(async () => {
    if (!scaledOut?.databaseUrl || !scaledOut.redisUrl) return;
    topology = await startTopology(
      { databaseUrl: scaledOut.databaseUrl, redisUrl: scaledOut.redisUrl },
      { SHUTDOWN_DRAIN_MS: '300000', LOG_LEVEL: 'warn' },
    );
    const workspace = await provisionWorkspace(topology.store, {
      name: 'Drain',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    api = client(topology.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: { name: 'Asha', first_message: 'Hello, this is Asha.', voice: { voice_id: 'local-en-female' } },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
  });

  after(async () => {
    await topology?.close();
  });

  async function liveOn(): Promise<{ id: string; node: string }> {
    const placed = await api<CallBody>('POST', '/v2/calls', { body: { to: SILENT, agent_id: agentId } });
    assert.equal(placed.status, 202, placed.text);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const call = await topology.store.calls.findById(placed.body.id);
      if (call?.status === 'in_progress' && call.gatewayNode) return { id: call.id, node: call.gatewayNode };
      assert.ok(
        Date.now() < deadline && ['queued', 'dialing'].includes(call?.status ?? ''),
        `${call?.status} ${call?.endedReason} ${call?.error}`,
      );
      await sleep(100);
    }
  }

  test('calls placed while a gateway drains run on the other one; its own live call is ended at the second signal', async () => {
    const first = await liveOn();
    const draining = topology.nodes.find((node) => node.name === first.node);
    assert.ok(draining, first.node);
    draining.child.kill('SIGTERM');
    const deadline = Date.now() + 30_000;
    while (!draining.output.join('').includes('shutting down') && Date.now() < deadline) await sleep(50);
    assert.ok(
      draining.output.join('').includes('shutting down'),
      `exit ${draining.child.exitCode} ${draining.child.signalCode}: ${draining.output.join('')} ${JSON.stringify(await topology.store.calls.findById(first.id))}`,
    );

    const later = [await liveOn(), await liveOn(), await liveOn()];
    for (const call of later) assert.notEqual(call.node, first.node, 'no new call on the draining gateway');
    assert.equal((await topology.store.calls.findById(first.id))?.status, 'in_progress', 'still draining');

    const exited = new Promise((resolve) => draining.child.once('exit', resolve));
    draining.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const ended = await topology.store.calls.findById(first.id);
    assert.deepEqual([ended?.status, ended?.endedReason, ended?.costPaise], ['failed', 'node-shutdown', 0]);
    for (const call of later) {
      const aborted = await api('POST', `/v2/calls/${call.id}/abort`);
      assert.equal(aborted.status, 200, aborted.text);
    }
  });
});
