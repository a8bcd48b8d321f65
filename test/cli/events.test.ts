/**
 * The operator's webhook commands as an operator runs them: real processes on a real store, replays to a real
 * HTTPS receiver (trusted through NODE_EXTRA_CA_CERTS, as operators do), JSON on stdout.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { settingsJson } from '../../core/agents/stored.ts';
import { testAgent } from '../../core/agents/testing/agents.ts';
import { admitCall } from '../../core/calls/admission.ts';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { openStore } from '../../core/store/index.ts';
import type { Store } from '../../core/store/types.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends } from '../support/platform.ts';
import { dropPostgresSchema, uniqueName } from '../support/services.ts';

const BIN = fileURLToPath(new URL('../../bin/voiceagent.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The backends share nothing (a data directory, a schema and a receiver each): they run side by side.
const backendsUnderTest = await backends();
describe('voiceagent events and webhook-secret on every backend', { concurrency: true }, () => {
  for (const backend of backendsUnderTest) {
    // Within a backend the cases run in order (they share a receiver; concurrency is inherited unless set).
    describe(`voiceagent events and webhook-secret (${backend.name})`, { concurrency: 1 }, () => {
      let dataDir: string;
      let env: Record<string, string>;
      let store: Store;
      let certs: TestCertificates;
      let receiver: WebhookReceiver;
      let customerSecrets: string[] = [];

      before(async () => {
        dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-cli-events-'));
        const schema = backend.databaseUrl ? uniqueName('cli_events').toLowerCase() : undefined;
        certs = makeCertificates();
        env = {
          PATH: process.env.PATH ?? '',
          DATA_DIR: dataDir,
          LOG_LEVEL: 'silent',
          NODE_EXTRA_CA_CERTS: certs.caFile,
          ALLOW_PRIVATE_WEBHOOKS: '1',
          ...(backend.databaseUrl && schema
            ? { DATABASE_URL: backend.databaseUrl, DATABASE_SCHEMA: schema }
            : {}),
        };
        store = await openStore({
          dataDir,
          ...(backend.databaseUrl && schema ? { databaseUrl: backend.databaseUrl, schema } : {}),
        });
        receiver = await WebhookReceiver.start({ certs, secrets: () => customerSecrets });
      });
      after(async () => {
        await receiver.close();
        await store.close();
        certs.cleanup();
        rmSync(dataDir, { recursive: true, force: true });
        if (backend.databaseUrl && env.DATABASE_SCHEMA)
          await dropPostgresSchema(backend.databaseUrl, env.DATABASE_SCHEMA);
      });

      const run = (args: string[], extraEnv: Record<string, string> = {}): Promise<Run> =>
        new Promise((resolve) => {
          execFile(
            process.execPath,
            [BIN, ...args],
            { env: { ...env, ...extraEnv }, timeout: 60_000 },
            (error, stdout, stderr) => {
              resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
            },
          );
        });
      const lines = (r: Run) =>
        r.stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>);

      /** A provisioned workspace (as `workspace create` makes it) with one dead-lettered `call.queued` event. */
      const deadEvent = async () => {
        const made = await provisionWorkspace(store, { name: 'Acme', mode: 'sandbox', balancePaise: 10_000 });
        const { workspace_id: workspaceId, webhook_secret: secret } = made;
        await store.workspaces.setQueuedEvents(workspaceId, true);
        const agent = await store.agents.create(
          workspaceId,
          settingsJson(testAgent({ max_duration_secs: 60 })),
        );
        const call = await admitCall(store, {
          workspaceId,
          agentId: agent.id,
          to: '+919812345678',
          variables: { otp: '9911' },
          webhookUrl: receiver.url(),
        });
        const [event] = await store.events.listForCall(workspaceId, call.id);
        assert.ok(event);
        await store.events.recordAttempt(event.id, 1, {
          delivered: false,
          status: 500,
          error: 'HTTP 500',
          retryAt: null,
        });
        return { workspaceId, secret, event };
      };

      test('lists dead letters as JSON lines, for one workspace or all', async () => {
        const a = await deadEvent();
        const b = await deadEvent();
        // Listing reads only: the three runs go side by side.
        const [all, one, none] = await Promise.all([
          run(['events', 'list', '--dead']),
          run(['events', 'list', '--dead', '--workspace', a.workspaceId]),
          run(['events', 'list', '--dead', '--workspace', 'ws_none']),
        ]);
        assert.equal(all.code, 0, all.stderr);
        const ids = lines(all).map((l) => l['id']);
        assert.ok(ids.includes(a.event.id) && ids.includes(b.event.id));
        assert.deepEqual(lines(one), [
          {
            id: a.event.id,
            workspace_id: a.workspaceId,
            call_id: a.event.callId,
            type: 'call.queued',
            status: 'dead',
            created_at: new Date(a.event.createdAt).toISOString(),
            attempts: 1,
            last_status: 500,
            last_error: 'HTTP 500',
            webhook_url: receiver.url(),
          },
        ]);
        assert.equal(none.stdout, '');
      });

      test('replays a dead event byte for byte with a fresh signature; a failed replay exits 1', async () => {
        const { workspaceId, secret, event } = await deadEvent();
        customerSecrets = [secret];

        receiver.misbehave({ status: 500 });
        const failed = await run(['events', 'replay', event.id]);
        assert.equal(failed.code, 1);
        assert.deepEqual(JSON.parse(failed.stdout), {
          event_id: event.id,
          delivered: false,
          status: 500,
          error: 'HTTP 500',
        });

        const refused = await run(['events', 'replay', event.id], { ALLOW_PRIVATE_WEBHOOKS: '0' });
        assert.equal(refused.code, 1);
        assert.match(JSON.parse(refused.stdout).error, /internal address/);

        const ok = await run(['events', 'replay', event.id]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.deepEqual(JSON.parse(ok.stdout), {
          event_id: event.id,
          delivered: true,
          status: 200,
          error: null,
        });
        const received = receiver.requests.filter((r) => r.id === event.id);
        assert.equal(received.length, 2, 'the refused replay never reached the receiver');
        for (const r of received) assert.ok(r.raw.equals(Buffer.from(event.body, 'utf8')));
        assert.deepEqual(received.at(-1)?.verified, [{ ok: true }]);
        assert.ok(!event.body.includes('9911'), 'variables are not on events');
        assert.equal((await store.events.get(event.id))?.status, 'delivered');
        const still = await run(['events', 'list', '--dead', '--workspace', workspaceId]);
        assert.equal(still.stdout, '', 'no longer a dead letter');
      });

      test('rotates the webhook secret: printed once, both valid during the overlap', async () => {
        const { workspaceId, secret: old, event } = await deadEvent();
        const rotated = await run(['webhook-secret', 'rotate', workspaceId, '--overlap-hours', '1']);
        assert.equal(rotated.code, 0, rotated.stderr);
        const out = JSON.parse(rotated.stdout);
        assert.deepEqual(Object.keys(out).sort(), ['previous_valid_until', 'webhook_secret', 'workspace_id']);
        assert.match(out.webhook_secret, /^whsec_[0-9a-f]{48}$/);
        assert.notEqual(out.webhook_secret, old);
        const until = Date.parse(out.previous_valid_until);
        assert.ok(Math.abs(until - (Date.now() + 3_600_000)) < 60_000);
        assert.deepEqual(
          (await store.secrets.webhookSecrets(workspaceId)).map((s) => s.secret),
          [out.webhook_secret, old],
        );

        customerSecrets = [old, out.webhook_secret];
        assert.equal((await run(['events', 'replay', event.id])).code, 0);
        const last = receiver.requests.filter((r) => r.id === event.id).at(-1);
        assert.deepEqual(last?.verified, [{ ok: true }, { ok: true }], 'signed by both secrets');

        const defaultOverlap = await run(['webhook-secret', 'rotate', workspaceId]);
        assert.equal(defaultOverlap.code, 0, defaultOverlap.stderr);
        const next = JSON.parse(defaultOverlap.stdout);
        assert.ok(Math.abs(Date.parse(next.previous_valid_until) - (Date.now() + 24 * 3_600_000)) < 60_000);
      });

      test("rotating the first-start workspace's secret updates credentials.json; other workspaces leave it alone", async () => {
        const file = path.join(dataDir, 'credentials.json');
        const { workspaceId, secret: old } = await deadEvent();
        const other = await deadEvent();
        const written = { workspace_id: workspaceId, api_key: 'sk_live_kept', webhook_secret: old };
        writeFileSync(file, JSON.stringify(written), { mode: 0o600 });
        try {
          assert.equal((await run(['webhook-secret', 'rotate', other.workspaceId])).code, 0);
          assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), written);
          const rotated = await run(['webhook-secret', 'rotate', workspaceId]);
          assert.equal(rotated.code, 0, rotated.stderr);
          assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), {
            ...written,
            webhook_secret: JSON.parse(rotated.stdout).webhook_secret,
          });
          assert.equal(statSync(file).mode & 0o777, 0o600);
        } finally {
          rmSync(file, { force: true });
        }
      });

      test('bad command lines exit 2 with the usage; unknown ids exit 1', async () => {
        // Each run is a process start (seconds on a busy machine): one case per kind of mistake, all side by side.
        const badLines = [
          ['events', 'list'],
          ['events', 'replay', 'evt_a', 'evt_b'],
          ['events', 'purge'],
          ['webhook-secret', 'rotate'],
          ['webhook-secret', 'rotate', 'ws_x', '--overlap-hours', '-1'],
          ['webhook-secret', 'rotate', 'ws_x', '--overlap-hours', 'lots'],
        ];
        const [refused, unknownEvent, unknownWorkspace] = await Promise.all([
          Promise.all(badLines.map((args) => run(args))),
          run(['events', 'replay', 'evt_01JAAAAAAAAAAAAAAAAAAAAAAA']),
          run(['webhook-secret', 'rotate', 'ws_01JAAAAAAAAAAAAAAAAAAAAAAA']),
        ]);
        for (const [i, r] of refused.entries()) {
          const args = badLines[i] ?? [];
          assert.equal(r.code, 2, args.join(' '));
          assert.match(r.stderr, /^voiceagent: .*\n\nvoiceagent: run and operate/s);
          assert.match(
            r.stderr,
            /events list --dead .*events replay EVT_ID.*webhook-secret rotate/s,
            'usage names them',
          );
          assert.equal(r.stdout, '');
        }
        assert.equal(unknownEvent.code, 1);
        assert.match(unknownEvent.stderr, /no event/);
        assert.equal(unknownWorkspace.code, 1);
        assert.match(unknownWorkspace.stderr, /no workspace/);
      });
    });
  }
});
