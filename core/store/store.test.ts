/**
 * The store's conformance suite: the same cases on SQLite (always) and PostgreSQL (when DATABASE_URL is set):
 * migrations, tenancy, key hashing, secrets, agent revisions, pagination, idempotency keys, transactions.
 * The wallet ledger has its own suite (core/billing/ledger.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { isId } from '../ids.ts';
import { sha256Hex } from './keys.ts';
import { IN_FLIGHT_TTL_MS } from './repos/idempotency.ts';
import { storeTargets } from './testing/targets.ts';
import type { AgentRecord, JsonObject, Store } from './types.ts';

/** Stored agent content as an object: the store keeps any JSON object (agents decode theirs). */
function objectOf(content: unknown): JsonObject {
  assert.ok(typeof content === 'object' && content !== null, 'stored content is an object');
  return Object.fromEntries(Object.entries(content));
}

const targets = await storeTargets('store');

for (const target of targets) {
  describe(`store on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    const workspace = async () => (await store.workspaces.create({ name: 'Acme', mode: 'production' })).id;

    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    describe('migrations', () => {
      it('are idempotent: a second store opens the same database and sees the same rows', async () => {
        const ws = await workspace();
        const second = await target.open(clock);
        try {
          assert.equal(second.dialect, target.name);
          assert.equal((await second.workspaces.get(ws))?.id, ws);
          assert.equal(await second.ping(), true);
        } finally {
          await second.close();
        }
        const applied = await target.rawRows('kysely_migration');
        assert.deepEqual(
          applied.map((r) => r['name']),
          [
            '0001_foundation',
            '0002_calls_events',
            '0003_tools_secrets',
            '0004_dnc',
            '0005_telephony',
            '0006_campaigns',
            '0007_inbound',
            '0008_speech',
            '0009_flow_jobs',
            '0010_campaign_calls',
            '0011_v1',
            '0012_transcriptions',
            '0013_v1_retries',
          ],
        );
      });
    });

    describe('workspaces', () => {
      it('creates, reads, counts and flags a workspace with an empty wallet', async () => {
        const before = await store.workspaces.count();
        const created = await store.workspaces.create({ name: 'Sandbox Co', mode: 'sandbox' });
        assert.ok(isId('workspace', created.id));
        assert.deepEqual(created, {
          id: created.id,
          name: 'Sandbox Co',
          mode: 'sandbox',
          queuedEventsEnabled: false,
          campaignsEnabled: true,
          createdAt: clock.now(),
        });
        assert.deepEqual(await store.workspaces.get(created.id), created);
        assert.equal(await store.workspaces.count(), before + 1);
        await store.workspaces.setQueuedEvents(created.id, true);
        assert.equal((await store.workspaces.get(created.id))?.queuedEventsEnabled, true);
        assert.equal(await store.workspaces.get('ws_01HZZZZZZZZZZZZZZZZZZZZZZZ'), undefined);
        assert.deepEqual(await store.wallet.balance(created.id), {
          balancePaise: 0,
          heldPaise: 0,
          availablePaise: 0,
        });
      });

      it('refuses a mode outside sandbox/production', async () => {
        await assert.rejects(store.workspaces.create({ name: 'x', mode: 'staging' as 'sandbox' }));
      });
    });

    describe('api keys', () => {
      it('returns the key once and stores only its SHA-256', async () => {
        const ws = await workspace();
        const { key, record } = await store.apiKeys.create(ws);
        assert.match(key, /^sk_live_[0-9a-f]{32}$/);
        assert.ok(isId('apiKey', record.id));
        assert.equal(record.prefix, key.slice(0, 12));
        assert.equal(record.revokedAt, null);
        const rows = (await target.rawRows('api_keys')).filter((r) => r['id'] === record.id);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.['key_hash'], sha256Hex(key));
        const stored = JSON.stringify(rows);
        assert.ok(!stored.includes(key.slice('sk_live_'.length)), 'the plain key must not be stored');
        assert.deepEqual(await store.apiKeys.findByKey(key), record);
      });

      it('answers undefined for unknown and malformed keys', async () => {
        assert.equal(await store.apiKeys.findByKey(`sk_live_${'0'.repeat(32)}`), undefined);
        assert.equal(await store.apiKeys.findByKey('sk_live_short'), undefined);
        assert.equal(await store.apiKeys.findByKey(''), undefined);
      });

      it('revokes by key and by id; revoked keys are still found, with revokedAt', async () => {
        const ws = await workspace();
        const a = await store.apiKeys.create(ws);
        const b = await store.apiKeys.create(ws);
        clock.advance(1_000);
        assert.equal(await store.apiKeys.revoke(a.key), true);
        assert.equal((await store.apiKeys.findByKey(a.key))?.revokedAt, clock.now());
        assert.equal(await store.apiKeys.revoke(b.record.id), true);
        assert.equal((await store.apiKeys.findByKey(b.key))?.revokedAt, clock.now());
        clock.advance(1_000);
        assert.equal(await store.apiKeys.revoke(a.key), true, 'revoking twice still names an existing key');
        assert.equal((await store.apiKeys.findByKey(a.key))?.revokedAt, clock.now() - 1_000);
        assert.equal(await store.apiKeys.revoke('key_01HZZZZZZZZZZZZZZZZZZZZZZZ'), false);
        assert.equal(await store.apiKeys.revoke(`sk_live_${'f'.repeat(32)}`), false);
      });

      it('lists only the workspace own keys, newest first', async () => {
        const ws = await workspace();
        const other = await workspace();
        const first = await store.apiKeys.create(ws);
        const second = await store.apiKeys.create(ws);
        await store.apiKeys.create(other);
        const listed = await store.apiKeys.listForWorkspace(ws);
        assert.deepEqual(
          listed.map((k) => k.id),
          [second.record.id, first.record.id],
        );
      });
    });

    describe('secrets', () => {
      it('creates one webhook secret and returns it again while current', async () => {
        const ws = await workspace();
        const secret = await store.secrets.createWebhookSecret(ws);
        assert.match(secret, /^whsec_[0-9a-f]{48}$/);
        assert.equal(await store.secrets.createWebhookSecret(ws), secret);
        assert.deepEqual(await store.secrets.webhookSecrets(ws), [
          { secret, createdAt: clock.now(), expiresAt: null },
        ]);
        assert.deepEqual(await store.secrets.webhookSecrets(await workspace()), []);
      });

      it('rotates with an overlap, newest first, and drops the old one after it', async () => {
        const ws = await workspace();
        const old = await store.secrets.createWebhookSecret(ws);
        const fresh = await store.secrets.rotateWebhookSecret(ws, 60_000);
        assert.notEqual(fresh, old);
        const secrets = await store.secrets.webhookSecrets(ws);
        assert.deepEqual(
          secrets.map((s) => [s.secret, s.expiresAt]),
          [
            [fresh, null],
            [old, clock.now() + 60_000],
          ],
        );
        clock.advance(60_000);
        assert.deepEqual(
          (await store.secrets.webhookSecrets(ws)).map((s) => s.secret),
          [fresh],
        );
      });

      it('keeps v1 private keys hashed and verifies them', async () => {
        const ws = await workspace();
        const { publicKey, privateKey } = await store.secrets.createV1Credentials(ws);
        assert.match(publicKey, /^pk_[0-9a-f]{32}$/);
        assert.match(privateKey, /^sk_v1_[0-9a-f]{48}$/);
        assert.deepEqual(await store.secrets.verifyV1Credentials(publicKey, privateKey), {
          workspaceId: ws,
          publicKey,
        });
        assert.equal(
          await store.secrets.verifyV1Credentials(publicKey, `sk_v1_${'0'.repeat(48)}`),
          undefined,
        );
        assert.equal(await store.secrets.verifyV1Credentials(`pk_${'0'.repeat(32)}`, privateKey), undefined);
        const raw = JSON.stringify(await target.rawRows('v1_credentials'));
        assert.ok(!raw.includes(privateKey.slice('sk_v1_'.length)), 'the private key must not be stored');
        assert.ok(raw.includes(sha256Hex(privateKey)));
      });
    });

    describe('agents', () => {
      const content = {
        name: 'Priya',
        voice: { voice_id: 'v1', language: 'hi-IN' },
        note: 'नमस्ते',
        z: 1,
        a: 2,
      };

      it('creates revision 1 with reason create and keeps the content as written', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, content);
        assert.ok(isId('agent', agent.id));
        assert.equal(agent.revision, 1);
        const read = await store.agents.get(ws, agent.id);
        assert.deepEqual(read, agent);
        assert.deepEqual(Object.keys(read?.content ?? {}), Object.keys(content), 'key order survives');
        const revisions = await store.agents.listRevisions(ws, agent.id, { limit: 10 });
        assert.deepEqual(revisions, {
          items: [
            {
              agentId: agent.id,
              revision: 1,
              reason: 'create',
              restoredFrom: null,
              content,
              createdAt: clock.now(),
            },
          ],
          hasMore: false,
        });
      });

      it('saves a new revision, refuses a stale ifRevision, and rolls back to an old one', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, content);
        clock.advance(10);
        const saved = await store.agents.save(ws, agent.id, {
          reason: 'update',
          ifRevision: 1,
          change: (current) => ({ ...objectOf(current.content), name: 'Asha' }),
        });
        assert.notEqual(typeof saved, 'string');
        const updated = saved as AgentRecord;
        assert.equal(updated.revision, 2);
        assert.equal(updated.updatedAt, clock.now());
        assert.equal(updated.createdAt, agent.createdAt);
        assert.equal(objectOf(updated.content).name, 'Asha');
        assert.deepEqual(await store.agents.get(ws, agent.id), updated);

        const stale = await store.agents.save(ws, agent.id, {
          reason: 'update',
          ifRevision: 1,
          change: () => assert.fail('change must not run on a conflict'),
        });
        assert.equal(stale, 'conflict');

        const first = await store.agents.getRevision(ws, agent.id, 1);
        assert.deepEqual(first?.content, content);
        const rolled = await store.agents.save(ws, agent.id, {
          reason: 'rollback',
          restoredFrom: 1,
          change: () => objectOf(first?.content),
        });
        assert.equal((rolled as AgentRecord).revision, 3);
        const revision3 = await store.agents.getRevision(ws, agent.id, 3);
        assert.equal(revision3?.reason, 'rollback');
        assert.equal(revision3?.restoredFrom, 1);
        assert.deepEqual(revision3?.content, content);
        assert.equal(await store.agents.getRevision(ws, agent.id, 4), undefined);
      });

      it('writes nothing when change throws', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, content);
        await assert.rejects(
          store.agents.save(ws, agent.id, {
            reason: 'update',
            change: () => {
              throw new Error('refused');
            },
          }),
          /refused/,
        );
        assert.deepEqual(await store.agents.get(ws, agent.id), agent);
        const revisions = await store.agents.listRevisions(ws, agent.id, { limit: 10 });
        assert.deepEqual(
          revisions?.items.map((r) => r.revision),
          [1],
        );
      });

      it('serialises concurrent saves: every save gets its own revision', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, { n: 0 });
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            store.agents.save(ws, agent.id, {
              reason: 'update',
              change: (current) => ({ n: Number(objectOf(current.content).n) + 1 }),
            }),
          ),
        );
        assert.deepEqual(
          results.map((r) => (r as AgentRecord).revision).sort((a, b) => a - b),
          [2, 3, 4, 5, 6, 7, 8, 9],
        );
        assert.deepEqual((await store.agents.get(ws, agent.id))?.content, { n: 8 });
      });

      it('hides a soft-deleted agent everywhere', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, content);
        assert.equal(await store.agents.softDelete(ws, agent.id), true);
        assert.equal(await store.agents.get(ws, agent.id), undefined);
        assert.deepEqual((await store.agents.list(ws, { limit: 10 })).items, []);
        assert.equal(await store.agents.listRevisions(ws, agent.id, { limit: 10 }), undefined);
        assert.equal(await store.agents.getRevision(ws, agent.id, 1), undefined);
        assert.equal(
          await store.agents.save(ws, agent.id, { reason: 'update', change: () => ({}) }),
          'not_found',
        );
        assert.equal(await store.agents.softDelete(ws, agent.id), false);
        const raw = (await target.rawRows('agents')).find((r) => r['id'] === agent.id);
        assert.ok(raw?.['deleted_at'] !== null, 'the row stays, marked deleted');
      });

      it('treats another workspace agent exactly as an unknown id', async () => {
        const ws = await workspace();
        const other = await workspace();
        const agent = await store.agents.create(ws, content);
        for (const id of [agent.id, 'agt_01HZZZZZZZZZZZZZZZZZZZZZZZ']) {
          assert.equal(await store.agents.get(other, id), undefined);
          assert.equal(
            await store.agents.save(other, id, { reason: 'update', change: () => ({}) }),
            'not_found',
          );
          assert.equal(await store.agents.softDelete(other, id), false);
          assert.equal(await store.agents.listRevisions(other, id, { limit: 10 }), undefined);
          assert.equal(await store.agents.getRevision(other, id, 1), undefined);
        }
        assert.deepEqual((await store.agents.list(other, { limit: 10 })).items, []);
        assert.equal((await store.agents.get(ws, agent.id))?.revision, 1);
      });
    });

    describe('pagination', () => {
      it('lists agents newest first, page by page, with exact hasMore edges', async () => {
        const ws = await workspace();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await store.agents.create(ws, { i })).id);
        const newest = [...ids].reverse();

        const pages: string[][] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.agents.list(ws, { limit: 2, ...(after ? { after } : {}) });
          pages.push(page.items.map((a) => a.id));
          if (!page.hasMore) break;
          after = page.items.at(-1)?.id;
        }
        assert.deepEqual(pages, [newest.slice(0, 2), newest.slice(2, 4), newest.slice(4)]);

        const exact = await store.agents.list(ws, { limit: 5 });
        assert.equal(exact.items.length, 5);
        assert.equal(exact.hasMore, false);
        const short = await store.agents.list(ws, { limit: 4 });
        assert.equal(short.hasMore, true);
        assert.deepEqual(await store.agents.list(ws, { limit: 3, after: newest[4] }), {
          items: [],
          hasMore: false,
        });
        assert.deepEqual(await store.agents.list(await workspace(), { limit: 3 }), {
          items: [],
          hasMore: false,
        });
        await assert.rejects(store.agents.list(ws, { limit: 0 }), RangeError);
      });

      it('lists revisions newest first with before', async () => {
        const ws = await workspace();
        const agent = await store.agents.create(ws, { v: 1 });
        for (let v = 2; v <= 5; v++) {
          await store.agents.save(ws, agent.id, { reason: 'update', change: () => ({ v }) });
        }
        const first = await store.agents.listRevisions(ws, agent.id, { limit: 2 });
        assert.deepEqual(
          first?.items.map((r) => r.revision),
          [5, 4],
        );
        assert.equal(first?.hasMore, true);
        const second = await store.agents.listRevisions(ws, agent.id, { limit: 2, before: 4 });
        assert.deepEqual(
          second?.items.map((r) => r.revision),
          [3, 2],
        );
        assert.equal(second?.hasMore, true);
        const last = await store.agents.listRevisions(ws, agent.id, { limit: 2, before: 2 });
        assert.deepEqual(last, {
          items: [
            {
              agentId: agent.id,
              revision: 1,
              reason: 'create',
              restoredFrom: null,
              content: { v: 1 },
              createdAt: clock.now(),
            },
          ],
          hasMore: false,
        });
      });
    });

    describe('idempotency keys', () => {
      const hash = sha256Hex('POST /v2/calls {}');

      it('claims once, replays the stored response, and is scoped to the workspace', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-1', requestHash: hash, ttlMs: 86_400_000 };
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true });
        const again = await store.idempotency.begin(input);
        assert.equal(again.claimed, false);
        assert.equal(!again.claimed && again.record.status, 'in_flight');
        await store.idempotency.complete(ws, 'k-1', 202, '{"id":"call_1"}', 86_400_000);
        const replay = await store.idempotency.begin({ ...input, requestHash: 'other' });
        assert.deepEqual(replay, {
          claimed: false,
          record: {
            workspaceId: ws,
            key: 'k-1',
            requestHash: hash,
            status: 'done',
            responseStatus: 202,
            responseBody: '{"id":"call_1"}',
            createdAt: clock.now(),
            expiresAt: clock.now() + 86_400_000,
          },
        });
        assert.deepEqual(await store.idempotency.begin({ ...input, workspaceId: await workspace() }), {
          claimed: true,
        });
      });

      it('replaces an expired record and lets an abandoned key be claimed again', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-2', requestHash: hash, ttlMs: 1_000 };
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true });
        await store.idempotency.complete(ws, 'k-2', 202, 'old', 1_000);
        clock.advance(1_000);
        assert.deepEqual(await store.idempotency.begin({ ...input, requestHash: 'new' }), { claimed: true });
        const current = await store.idempotency.begin(input);
        assert.equal(!current.claimed && current.record.requestHash, 'new');
        assert.equal(!current.claimed && current.record.responseBody, null);
        await store.idempotency.abandon(ws, 'k-2');
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true });
        await store.idempotency.complete(ws, 'k-2', 202, 'kept', 1_000);
        await store.idempotency.abandon(ws, 'k-2');
        const kept = await store.idempotency.begin(input);
        assert.equal(!kept.claimed && kept.record.responseBody, 'kept', 'abandon leaves a done record');
      });

      it('lets a retry take over an in-flight claim whose request died, after the short claim expiry', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-stale', requestHash: hash, ttlMs: 86_400_000 };
        const claimedAt = clock.now();
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true });
        clock.advance(IN_FLIGHT_TTL_MS - 1);
        const busy = await store.idempotency.begin(input);
        assert.equal(!busy.claimed && busy.record.status, 'in_flight');
        assert.equal(!busy.claimed && busy.record.expiresAt, claimedAt + IN_FLIGHT_TTL_MS);
        clock.advance(1);
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true }, 'taken over');
        const taken = await store.idempotency.begin(input);
        assert.equal(!taken.claimed && taken.record.createdAt, clock.now());

        const short = { ...input, key: 'k-stale-short', inFlightTtlMs: 5_000 };
        assert.deepEqual(await store.idempotency.begin(short), { claimed: true });
        clock.advance(4_999);
        assert.equal((await store.idempotency.begin(short)).claimed, false);
        clock.advance(1);
        assert.deepEqual(await store.idempotency.begin(short), { claimed: true });
      });

      it('replays a completed record for the whole window, long after the in-flight expiry', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-done', requestHash: hash, ttlMs: 86_400_000 };
        const claimedAt = clock.now();
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true });
        clock.advance(2_500);
        await store.idempotency.complete(ws, 'k-done', 202, '{"id":"call_2"}', input.ttlMs);
        clock.advance(IN_FLIGHT_TTL_MS);
        const replay = await store.idempotency.begin(input);
        assert.equal(!replay.claimed && replay.record.status, 'done');
        assert.equal(!replay.claimed && replay.record.responseBody, '{"id":"call_2"}');
        assert.equal(!replay.claimed && replay.record.expiresAt, claimedAt + input.ttlMs);
        clock.set(claimedAt + input.ttlMs - 1);
        assert.equal((await store.idempotency.begin(input)).claimed, false, 'still replayed at the end');
        clock.set(claimedAt + input.ttlMs);
        assert.deepEqual(await store.idempotency.begin(input), { claimed: true }, 'gone after 24 h');
      });

      it('refuses a claim expiry that is not a positive whole number of milliseconds', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-bad', requestHash: hash, ttlMs: 1_000 };
        await assert.rejects(store.idempotency.begin({ ...input, inFlightTtlMs: 0 }), RangeError);
        await assert.rejects(store.idempotency.complete(ws, 'k-bad', 202, '{}', -1), RangeError);
      });

      it('lets exactly one of many concurrent begins claim a key, also an expired one', async () => {
        const ws = await workspace();
        const input = { workspaceId: ws, key: 'k-race', requestHash: hash, ttlMs: 5_000 };
        const race = async () =>
          Promise.all(Array.from({ length: 12 }, () => store.idempotency.begin(input)));
        assert.equal((await race()).filter((r) => r.claimed).length, 1);
        clock.advance(5_000);
        assert.equal((await race()).filter((r) => r.claimed).length, 1);
      });
    });

    describe('transactions', () => {
      it('commits together, rolls back together, and nests by joining', async () => {
        const ws = await workspace();
        let inner: string | undefined;
        await assert.rejects(
          store.transaction(async (repos) => {
            await repos.agents.create(ws, { step: 'outer' });
            await store.transaction(async (nested) => {
              inner = (await nested.agents.create(ws, { step: 'inner' })).id;
            });
            throw new Error('abort');
          }),
          /abort/,
        );
        assert.ok(inner);
        assert.equal(
          await store.agents.get(ws, inner),
          undefined,
          'the nested write rolled back with the outer',
        );
        assert.deepEqual((await store.agents.list(ws, { limit: 10 })).items, []);

        const ids = await store.transaction(async (repos) => {
          const a = await repos.agents.create(ws, { step: 1 });
          // The store's own repositories join the running transaction instead of waiting for it.
          const b = await store.agents.create(ws, { step: 2 });
          return [a.id, b.id];
        });
        assert.deepEqual(
          (await store.agents.list(ws, { limit: 10 })).items.map((a) => a.id),
          [...ids].reverse(),
        );
      });

      it('answers ping', async () => {
        assert.equal(await store.ping(), true);
      });
    });
  });
}
