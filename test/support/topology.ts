/**
 * The platform as separate processes, as operators scale it out: one API, two gateways behind a round-robin TCP
 * balancer, one worker, all on one PostgreSQL schema and one Redis prefix with one shared secret. Each process is
 * `voiceagent serve --roles ...`, started the way an operator would. The balancer stands in for the operator's
 * load balancer in front of the gateways.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { openConfiguredStore } from '../../cli/store.ts';
import { loadConfig } from '../../core/config.ts';
import type { Store } from '../../core/store/types.ts';
import { dropPostgresSchema, uniqueName } from './services.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/voiceagent.js');

export interface Node {
  name: string;
  roles: string;
  env: Record<string, string>;
  child: ChildProcess;
  output: string[];
}

export interface Topology {
  /** Base URL of the API node. */
  url: string;
  /** The store the nodes share, for what an operator would do with the CLI. */
  store: Store;
  nodes: Node[];
  dataDir: string;
  /** The PostgreSQL schema the nodes share. */
  schema: string;
  /** Kills a node at once (SIGKILL: no shutdown of any kind). */
  kill(name: string): Promise<void>;
  /** Starts a killed node again, with its old settings; resolves once it runs (a worker: once it dials). */
  restart(name: string): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A round-robin TCP balancer on loopback; a backend that refuses the connection is skipped. */
async function startBalancer(ports: number[]): Promise<{ port: number; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const connect = (attempt: number) => {
      const port = ports[next++ % ports.length] as number;
      const upstream = net.connect(port, '127.0.0.1');
      sockets.add(upstream);
      upstream.on('close', () => sockets.delete(upstream));
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        client.pipe(upstream);
        upstream.pipe(client);
      });
      upstream.on('error', () => {
        // A refused connection (a stopped or draining gateway) goes to the next backend.
        if (!connected && attempt < ports.length) connect(attempt + 1);
        else client.destroy();
      });
      client.on('error', () => upstream.destroy());
    };
    connect(1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A node starts in seconds; on a machine busy with other work, loading its modules alone may take a minute. */
async function waitHealthy(url: string, node: Node, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (node.child.exitCode !== null) {
      throw new Error(`${node.name} exited (${node.child.exitCode}):\n${node.output.join('').slice(-2000)}`);
    }
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${node.name} did not become healthy at ${url}`);
    await sleep(200);
  }
}

/**
 * A worker serves nothing to ask for its health; it is running once its dialer listens for admissions (the one
 * subscriber of the channel they are announced on).
 */
async function waitDialerListening(redisUrl: string, prefix: string, node: Node, timeoutMs = 120_000) {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (node.child.exitCode !== null) {
        throw new Error(
          `${node.name} exited (${node.child.exitCode}):\n${node.output.join('').slice(-2000)}`,
        );
      }
      const listeners = await redis
        .pubsub('NUMSUB', `${prefix}:chan:calls:queued`)
        .then((reply) => Number((reply as [string, number])[1]))
        .catch(() => 0);
      if (listeners > 0) return;
      if (Date.now() > deadline) throw new Error(`${node.name} did not start dialing`);
      await sleep(200);
    }
  } finally {
    redis.disconnect();
  }
}

/** Whether the node's process has ended: exited by itself, or killed by a signal. */
function hasEnded(node: Node): boolean {
  return node.child.exitCode !== null || node.child.signalCode !== null;
}

function launch(name: string, roles: string, env: Record<string, string>): Node {
  const child = spawn(process.execPath, [BIN, 'serve', '--roles', roles], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  // TOPOLOGY_LOG_DIR keeps every line of every node (one file per node name, at level info) for a post-mortem.
  const logDir = process.env.TOPOLOGY_LOG_DIR;
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (logDir) appendFileSync(path.join(logDir, `${name}.log`), chunk);
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { name, roles, env, child, output };
}

/**
 * Starts api, gateway-a, gateway-b (behind the balancer) and worker (and worker-b when asked) on PostgreSQL and Redis. `env` is added to
 * every node's settings (short retry schedules and leases for tests, a CA file for the webhook receiver).
 */
export async function startTopology(
  services: { databaseUrl: string; redisUrl: string },
  env: Record<string, string> = {},
  options: { secondWorker?: boolean } = {},
): Promise<Topology> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-topology-'));
  const schema = uniqueName('t').toLowerCase();
  const [apiPort, gatewayA, gatewayB] = await Promise.all([freePort(), freePort(), freePort()]);
  const balancer = await startBalancer([gatewayA, gatewayB]);
  const gatewayUrl = `ws://127.0.0.1:${balancer.port}`;
  const shared: Record<string, string> = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: services.databaseUrl,
    DATABASE_SCHEMA: schema,
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: uniqueName('t'),
    SECRET_KEY: `test-secret-${uniqueName('s')}-0123456789abcdef0123456789`,
    PUBLIC_GATEWAY_URL: gatewayUrl,
    LOG_LEVEL: process.env.TOPOLOGY_LOG_DIR ? 'info' : 'warn',
    API_RATE_PER_SEC: '100000',
    API_RATE_BURST: '100000',
    BOOTSTRAP_BALANCE_INR: '0',
    ...env,
  };
  const plan: Array<{ name: string; roles: string; env: Record<string, string>; health: string }> = [
    {
      name: 'api',
      roles: 'api',
      env: { ...shared, PORT: String(apiPort), NODE_ID: 'api' },
      health: `http://127.0.0.1:${apiPort}/healthz`,
    },
    {
      name: 'gateway-a',
      roles: 'gateway',
      env: { ...shared, GATEWAY_PORT: String(gatewayA), NODE_ID: 'gateway-a' },
      health: `http://127.0.0.1:${gatewayA}/healthz`,
    },
    {
      name: 'gateway-b',
      roles: 'gateway',
      env: { ...shared, GATEWAY_PORT: String(gatewayB), NODE_ID: 'gateway-b' },
      health: `http://127.0.0.1:${gatewayB}/healthz`,
    },
    { name: 'worker', roles: 'worker', env: { ...shared, NODE_ID: 'worker' }, health: '' },
    ...(options.secondWorker
      ? [{ name: 'worker-b', roles: 'worker', env: { ...shared, NODE_ID: 'worker-b' }, health: '' }]
      : []),
  ];
  const nodes: Node[] = [];
  const store = await openConfiguredStore(
    loadConfig({ DATA_DIR: dataDir, DATABASE_URL: services.databaseUrl, DATABASE_SCHEMA: schema }),
  );
  const health = new Map(plan.map((step) => [step.name, step.health]));
  const ready = (node: Node) => {
    const url = health.get(node.name);
    return url
      ? waitHealthy(url, node)
      : waitDialerListening(services.redisUrl, shared.REDIS_PREFIX as string, node);
  };
  try {
    // All at once: the store above has migrated the schema, and no node needs another to start (the worker
    // reaches the gateways through the balancer when it dials). Starting is mostly compiling and loading
    // modules, so on a small machine this is much quicker than one after another.
    for (const step of plan) nodes.push(launch(step.name, step.roles, step.env));
    await Promise.all(nodes.map((node) => ready(node)));
  } catch (error) {
    for (const node of nodes) node.child.kill('SIGKILL');
    await balancer.close();
    await store.close();
    throw error;
  }

  const topology: Topology = {
    url: `http://127.0.0.1:${apiPort}`,
    store,
    nodes,
    dataDir,
    schema,
    async kill(name) {
      const node = nodes.find((n) => n.name === name);
      if (!node || hasEnded(node)) return;
      const exited = new Promise((resolve) => node.child.once('exit', resolve));
      node.child.kill('SIGKILL');
      await exited;
    },
    async restart(name) {
      const index = nodes.findIndex((n) => n.name === name);
      const old = nodes[index];
      if (!old) throw new Error(`no node ${name}`);
      const node = launch(old.name, old.roles, old.env);
      nodes[index] = node;
      await ready(node);
    },
    async close() {
      await Promise.all(
        nodes.map(async (node) => {
          if (hasEnded(node)) return;
          const exited = new Promise((resolve) => node.child.once('exit', resolve));
          node.child.kill('SIGTERM');
          const timer = setTimeout(() => node.child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }),
      );
      await balancer.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropPostgresSchema(services.databaseUrl, schema);
    },
  };
  return topology;
}
