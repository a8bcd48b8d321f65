/**
 * A redis-server of a suite's own on a free loopback port, run as docker-compose.yml runs it: no snapshots, no
 * append-only file, so a restart loses every key. Suites that stop Redis use this, never the shared one.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-redis-'));
    const server = new RedisServer(await freePort(), dir);
    await server.launch();
    return server;
  }

  /** Stops the server (its keys are gone with it), waits `downMs`, and starts it again on the same port. */
  async restart(downMs = 1_000): Promise<void> {
    await this.halt();
    await sleep(downMs);
    await this.launch();
  }

  /** The outage: the server stops (its keys are gone with it) until `up`. */
  down(): Promise<void> {
    return this.halt();
  }

  /** Redis is back, on the same port, empty. */
  up(): Promise<void> {
    return this.child ? Promise.resolve() : this.launch();
  }

  async stop(): Promise<void> {
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir];
    const child = spawn('redis-server', [...args, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${this.port}`);
      await sleep(50);
    }
  }

  private async halt(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}
