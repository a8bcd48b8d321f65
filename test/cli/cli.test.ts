/** The operator CLI as an operator runs it: real processes, real stores, JSON on stdout. */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backends, request } from '../support/platform.ts';
import { dropPostgresSchema, uniqueName } from '../support/services.ts';

const BIN = fileURLToPath(new URL('../../bin/voiceagent.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The backends share nothing (a data directory, a schema and a receiver each): they run side by side.
const backendsUnderTest = await backends();
describe('voiceagent CLI on every backend', { concurrency: true }, () => {
  for (const backend of backendsUnderTest) {
    // Within a backend the cases run in order (concurrency is inherited unless set).
    describe(`voiceagent CLI (${backend.name})`, { concurrency: 1 }, () => {
      let dataDir: string;
      let env: Record<string, string>;
      before(() => {
        dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-cli-'));
        env = {
          PATH: process.env.PATH ?? '',
          DATA_DIR: dataDir,
          LOG_LEVEL: 'silent',
          ...(backend.databaseUrl
            ? { DATABASE_URL: backend.databaseUrl, DATABASE_SCHEMA: uniqueName('cli').toLowerCase() }
            : {}),
          ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl, REDIS_PREFIX: uniqueName('cli') } : {}),
        };
      });
      after(async () => {
        rmSync(dataDir, { recursive: true, force: true });
        if (backend.databaseUrl && env.DATABASE_SCHEMA)
          await dropPostgresSchema(backend.databaseUrl, env.DATABASE_SCHEMA);
      });

      const run = (...args: string[]): Promise<Run> =>
        new Promise((resolve) => {
          execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
            resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
          });
        });

      test('workspace create prints one JSON object with every credential', async () => {
        const r = await run(
          'workspace',
          'create',
          '--name',
          'Acme',
          '--mode',
          'production',
          '--balance-inr',
          '250.5',
        );
        assert.equal(r.code, 0, r.stderr);
        const lines = r.stdout.trim().split('\n');
        assert.equal(lines.length, 1);
        const out = JSON.parse(lines[0]!);
        assert.deepEqual(Object.keys(out).sort(), [
          'api_key',
          'mode',
          'v1',
          'webhook_secret',
          'workspace_id',
        ]);
        assert.match(out.workspace_id, /^ws_[0-9A-Z]{26}$/);
        assert.equal(out.mode, 'production');
        assert.match(out.api_key, /^sk_live_[0-9a-f]{32}$/);
        assert.match(out.webhook_secret, /^whsec_[0-9a-f]+$/);
        assert.deepEqual(Object.keys(out.v1).sort(), ['private_key', 'public_key', 'workspace']);
        assert.equal(out.v1.workspace, out.workspace_id);
      });

      test('key create, wallet topup and key revoke, then bad input', async () => {
        const ws = JSON.parse((await run('workspace', 'create', '--name', 'Beta')).stdout);
        const key = await run('key', 'create', ws.workspace_id);
        assert.equal(key.code, 0, key.stderr);
        const created = JSON.parse(key.stdout);
        assert.match(created.api_key, /^sk_live_[0-9a-f]{32}$/);
        assert.notEqual(created.api_key, ws.api_key);

        const topup = await run('wallet', 'topup', ws.workspace_id, '--inr', '99.99');
        assert.equal(topup.code, 0, topup.stderr);
        const t = JSON.parse(topup.stdout);
        assert.equal(t.amount_inr, 99.99);
        assert.equal(t.balance_inr, 99.99);

        const queued = await run('workspace', 'queued-events', ws.workspace_id, 'on');
        assert.equal(queued.code, 0, queued.stderr);
        assert.deepEqual(JSON.parse(queued.stdout), { workspace_id: ws.workspace_id, queued_events: true });
        assert.equal(
          (await run('workspace', 'queued-events', 'ws_01JAAAAAAAAAAAAAAAAAAAAAAA', 'on')).code,
          1,
        );
        const campaigns = await run('workspace', 'campaigns', ws.workspace_id, 'off');
        assert.equal(campaigns.code, 0, campaigns.stderr);
        assert.deepEqual(JSON.parse(campaigns.stdout), { workspace_id: ws.workspace_id, campaigns: false });

        assert.equal((await run('key', 'revoke', created.api_key)).code, 0);

        // The refusals below change nothing and each is a process start: they run side by side.
        const unknownIds = [
          ['key', 'revoke', 'sk_live_ffffffffffffffffffffffffffffffff'],
          ['key', 'create', 'ws_01JAAAAAAAAAAAAAAAAAAAAAAA'],
        ];
        const badLines = [
          ['nonsense'],
          ['workspace', 'create'],
          ['workspace', 'create', '--name', 'x', '--mode', 'live'],
          ['workspace', 'create', '--name', 'x', '--balance-inr', 'lots'],
          ['workspace', 'queued-events', ws.workspace_id, 'maybe'],
          ['workspace', 'campaigns', ws.workspace_id],
          ['wallet', 'topup', ws.workspace_id, '--inr', '-5'],
          ['wallet', 'topup', ws.workspace_id, '--inr', '1.234'],
          ['wallet', 'topup', ws.workspace_id],
          ['key', 'create'],
          ['serve', '--roles', 'api,pager'],
        ];
        const [unknown, refused] = await Promise.all([
          Promise.all(unknownIds.map((args) => run(...args))),
          Promise.all(badLines.map((args) => run(...args))),
        ]);
        assert.deepEqual(
          unknown.map((r) => r.code),
          [1, 1],
        );
        for (const [i, r] of refused.entries()) {
          const args = badLines[i] ?? [];
          assert.equal(r.code, 2, args.join(' '));
          assert.match(r.stderr, /voiceagent: /);
          assert.equal(r.stdout, '');
        }
      });

      test('serve: first start creates a sandbox workspace, prints its key once, writes credentials.json 0600', async () => {
        const serveDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-serve-'));
        const serveEnv = {
          ...env,
          DATA_DIR: serveDir,
          PORT: '0',
          HOST: '127.0.0.1',
          ...(backend.databaseUrl ? { DATABASE_SCHEMA: uniqueName('serve').toLowerCase() } : {}),
        };
        const start = async () => {
          const child = spawn(process.execPath, [BIN, 'serve', '--roles', 'api'], { env: serveEnv });
          let out = '';
          child.stdout.on('data', (chunk) => {
            out += String(chunk);
          });
          const url = await new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
            child.stdout.on('data', () => {
              const match = /Control API: (http:\/\/\S+)/.exec(out);
              if (match) {
                clearTimeout(timer);
                resolve(match[1]!);
              }
            });
            child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
          });
          return { child, url, output: () => out };
        };
        const stop = (child: ChildProcess) =>
          new Promise<number | null>((resolve) => {
            child.once('exit', (code) => resolve(code));
            child.kill('SIGTERM');
          });
        try {
          const first = await start();
          const file = path.join(serveDir, 'credentials.json');
          assert.equal(statSync(file).mode & 0o777, 0o600);
          const creds = JSON.parse(readFileSync(file, 'utf8'));
          assert.ok(first.output().includes(creds.api_key), 'the key is printed');
          const wallet = await request(first.url, 'GET', '/v2/wallet', { key: creds.api_key });
          assert.equal(wallet.status, 200);
          assert.equal(wallet.body.balance_inr, 500);
          assert.equal(await stop(first.child), 0);

          const second = await start();
          assert.ok(!second.output().includes('sk_live_'), 'no second workspace, no key printed');
          assert.equal((await request(second.url, 'GET', '/healthz')).status, 200);
          assert.equal(await stop(second.child), 0);
        } finally {
          rmSync(serveDir, { recursive: true, force: true });
          if (backend.databaseUrl && serveEnv.DATABASE_SCHEMA) {
            await dropPostgresSchema(backend.databaseUrl, serveEnv.DATABASE_SCHEMA);
          }
        }
      });
    });
  }
});
