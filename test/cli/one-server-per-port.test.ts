/**
 * One server per port: a second `voiceagent serve` on ports a running one holds exits non-zero with one line
 * naming the port, instead of running on beside it (for the gateway, sharing the port through SO_REUSEPORT and
 * taking a share of the streams). Sharing the gateway port is for an operator who asks (GATEWAY_REUSE_PORT=1).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/voiceagent.js', import.meta.url));

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('one server per port', () => {
  let dataDir: string;
  const children: ChildProcess[] = [];
  let first: Started;
  let apiPort: string;
  let gatewayPort: string;

  function serve(env: Record<string, string>, roles = 'api,gateway,worker'): Started {
    const child = spawn(process.execPath, [BIN, 'serve', '--roles', roles], {
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      out += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => out, exited };
  }

  async function waitFor(started: Started, pattern: RegExp): Promise<RegExpExecArray> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const match = pattern.exec(started.output());
      if (match) return match;
      if (started.child.exitCode !== null || Date.now() > deadline)
        assert.fail(`no ${pattern} in:\n${started.output()}`);
      await sleep(100);
    }
  }

  /** Runs a server that must fail to start; returns its exit code and what it printed. */
  async function failing(env: Record<string, string>, roles?: string) {
    const started = serve(env, roles);
    const timer = setTimeout(() => started.child.kill('SIGKILL'), 120_000);
    const code = await started.exited;
    clearTimeout(timer);
    // Log lines (JSON) may come before, such as a node without an STT engine warning about it.
    const lines = started
      .output()
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('{'));
    return { code, lines };
  }

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-ports-'));
    first = serve({ PORT: '0', GATEWAY_PORT: '0' });
    apiPort = (await waitFor(first, /Control API: http:\/\/127\.0\.0\.1:(\d+)/))[1] ?? '';
    gatewayPort = (await waitFor(first, /Media gateway: ws:\/\/127\.0\.0\.1:(\d+)/))[1] ?? '';
  });

  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('a second gateway on a busy gateway port exits 1 with one line', async () => {
    const { code, lines } = await failing({ GATEWAY_PORT: gatewayPort }, 'gateway');
    assert.equal(code, 1);
    assert.deepEqual(lines, [
      `voiceagent: media gateway could not listen on 127.0.0.1:${gatewayPort}: the port is in use (another server?)`,
    ]);
  });

  test('a second server on a busy API port exits 1 with one line', async () => {
    const { code, lines } = await failing({ PORT: apiPort, GATEWAY_PORT: '0' });
    assert.equal(code, 1);
    assert.deepEqual(lines, [
      `voiceagent: control API could not listen on 127.0.0.1:${apiPort}: the port is in use (another server?)`,
    ]);
  });

  test('the first server kept serving, and stops cleanly', async () => {
    const health = await fetch(`http://127.0.0.1:${gatewayPort}/healthz`);
    assert.equal(health.status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
  });

  test('GATEWAY_REUSE_PORT=1: gateways share a port when the operator asks', async () => {
    // A port chosen by the kernel (0) is never shared, so this one is picked first.
    const port = String(await freePort());
    const a = serve({ GATEWAY_PORT: port, GATEWAY_REUSE_PORT: '1' }, 'gateway');
    await waitFor(a, new RegExp(`Media gateway: ws://127\\.0\\.0\\.1:${port}`));
    const b = serve({ GATEWAY_PORT: port, GATEWAY_REUSE_PORT: '1' }, 'gateway');
    await waitFor(b, new RegExp(`Media gateway: ws://127\\.0\\.0\\.1:${port}`));
    for (const server of [a, b]) {
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    }
  });
});
