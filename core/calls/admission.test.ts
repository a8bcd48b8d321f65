/**
 * Admission (`POST /v2/calls` behind its route), on SQLite always and PostgreSQL when DATABASE_URL is set:
 * the hold for the worst case, every refusal writing nothing, the queue-depth limit (also under concurrent
 * admissions), and the opt-in `call.queued` event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { type ErrorCode, isApiError } from '../errors.ts';
import { isId, newId } from '../ids.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { CallRecord, Repositories, Store } from '../store/types.ts';
import { admitCall, type CallRequest, QUEUE_DEPTH_LIMIT } from './admission.ts';
import { callObject } from './representation.ts';
import { fundedWorkspace } from './testing/workspaces.ts';

const targets = await storeTargets('admission');

function rejectsWith(code: ErrorCode, check?: (error: { retryAfterSecs?: number | undefined }) => void) {
  return (error: unknown) => {
    assert.ok(isApiError(error), String(error));
    assert.equal(error.code, code);
    check?.(error);
    return true;
  };
}

for (const target of targets) {
  describe(`call admission on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    const request = (
      workspaceId: string,
      agentId: string,
      extra: Partial<CallRequest> = {},
    ): CallRequest => ({
      workspaceId,
      agentId,
      to: '+919812345678',
      variables: { name: 'Ravi' },
      webhookUrl: 'https://hooks.example.com/calls',
      ...extra,
    });
    /** Everything admission can write for a workspace, to show a refusal wrote nothing. */
    const footprint = async (ws: string) => ({
      wallet: await store.wallet.balance(ws),
      calls: (await store.calls.list(ws, { limit: 1_000 })).items.length,
      events: (await target.rawRows('events')).filter((r) => r['workspace_id'] === ws).length,
      holds: (await target.rawRows('wallet_holds')).filter((r) => r['workspace_id'] === ws).length,
    });

    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    it('queues the call at t3 by default, holding its whole max duration at the tier rate', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 10_000);
      const call = await admitCall(store, request(ws, agentId));
      assert.ok(isId('call', call.id));
      assert.equal(call.status, 'queued');
      assert.equal(call.tier, 't3');
      assert.equal(call.perMinPaise, 300);
      assert.equal(call.maxDurationSecs, 300);
      assert.equal(call.agentRevision, 1);
      assert.deepEqual(call.variables, { name: 'Ravi' });
      assert.deepEqual(await store.calls.get(ws, call.id), call);
      const hold = await store.wallet.getHold(ws, call.id);
      assert.equal(hold?.amountPaise, 1_500, '300 s at ₹3 a minute');
      assert.equal(hold?.kind, 'call');
      assert.deepEqual(await store.wallet.balance(ws), {
        balancePaise: 10_000,
        heldPaise: 1_500,
        availablePaise: 8_500,
      });
      assert.deepEqual(await store.events.listForCall(ws, call.id), [], 'call.queued is opt-in');

      const t1 = await admitCall(store, request(ws, agentId, { tier: 't1', maxDurationSecs: 45 }));
      assert.equal((await store.wallet.getHold(ws, t1.id))?.amountPaise, 75, '45 s at ₹1 a minute');
      assert.equal(t1.maxDurationSecs, 45);
    });

    it('takes max_duration_secs from the agent unless the call overrides it', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 10_000, {
        agent: { name: 'Long', max_duration_secs: 600 },
      });
      assert.equal((await admitCall(store, request(ws, agentId))).maxDurationSecs, 600);
      assert.equal(
        (await admitCall(store, request(ws, agentId, { maxDurationSecs: 30 }))).maxDurationSecs,
        30,
      );
    });

    it('refuses, writing nothing: unknown, foreign or deleted agent; t5; bad tier or duration; low balance', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 1_000);
      const other = await fundedWorkspace(store, 1_000);
      const deleted = (await store.agents.create(ws, { name: 'Gone' })).id;
      await store.agents.softDelete(ws, deleted);
      const before = await footprint(ws);
      const cases: Array<[Partial<CallRequest>, ErrorCode]> = [
        [{ agentId: `agt_${'0'.repeat(26)}` }, 'not_found'],
        [{ agentId: other.agentId }, 'not_found'],
        [{ agentId: deleted }, 'not_found'],
        [{ tier: 't5' }, 'tier_unavailable'],
        [{ tier: 't2' }, 'invalid_request'],
        [{ maxDurationSecs: 29 }, 'invalid_request'],
        [{ maxDurationSecs: 1_801 }, 'invalid_request'],
        [{ maxDurationSecs: 1_000 }, 'insufficient_balance'],
      ];
      for (const [extra, code] of cases) {
        await assert.rejects(admitCall(store, request(ws, agentId, extra)), rejectsWith(code));
      }
      assert.deepEqual(await footprint(ws), before);
      // 1,000 paise covers 200 s at t3 exactly.
      await admitCall(store, request(ws, agentId, { maxDurationSecs: 200 }));
      await assert.rejects(
        admitCall(store, request(ws, agentId, { maxDurationSecs: 30 })),
        rejectsWith('insufficient_balance'),
      );
    });

    it('refuses the 501st open call with rate_limited and Retry-After, writing nothing', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 10_000);
      await store.transaction(async (repos) => {
        for (let i = 0; i < QUEUE_DEPTH_LIMIT; i++) {
          await repos.calls.insert({
            id: newId('call', clock.now()),
            workspaceId: ws,
            agentId,
            agentRevision: 1,
            channel: 'phone',
            toNumber: '+919812345678',
            tier: 't3',
            perMinPaise: 300,
            maxDurationSecs: 300,
            variables: {},
            webhookUrl: null,
          });
        }
      });
      const before = await footprint(ws);
      await assert.rejects(
        admitCall(store, request(ws, agentId)),
        rejectsWith('rate_limited', (e) => assert.equal(e.retryAfterSecs, 30)),
      );
      assert.deepEqual(await footprint(ws), before);
      const [first] = await store.calls.nextQueued(ws, 1);
      await store.calls.transition(ws, first!.id, { from: ['queued'], to: 'aborted' });
      assert.equal(
        (await admitCall(store, request(ws, agentId))).status,
        'queued',
        'room again once one ends',
      );
    });

    it('never overshoots the queue limit under concurrent admissions', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 100_000);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, () => admitCall(store, request(ws, agentId), { queueDepthLimit: 5 })),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
      for (const r of results) if (r.status === 'rejected') rejectsWith('rate_limited')(r.reason);
      assert.equal(await store.calls.countOpen(ws), 5);
      assert.equal((await store.wallet.balance(ws)).heldPaise, 5 * 1_500);
    });

    it('writes call.queued in the same transaction when enabled, without variables, and announces it', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 10_000, { queuedEvents: true });
      let announced = 0;
      const call = await admitCall(store, request(ws, agentId), { announce: () => announced++ });
      const events = await store.events.listForCall(ws, call.id);
      assert.equal(events.length, 1);
      const [event] = events;
      assert.equal(event?.type, 'call.queued');
      assert.equal(event?.status, 'pending');
      assert.equal(event?.webhookUrl, 'https://hooks.example.com/calls');
      const body = JSON.parse(event?.body ?? '');
      assert.deepEqual(body, {
        id: event?.id,
        type: 'call.queued',
        created_at: new Date(call.createdAt).toISOString(),
        data: { call: callObject(call) },
      });
      assert.ok(!event?.body.includes('Ravi'), 'variables are never on events');
      assert.equal(announced, 1);

      const silent = await admitCall(store, request(ws, agentId, { webhookUrl: null }), {
        announce: () => announced++,
      });
      assert.equal((await store.events.listForCall(ws, silent.id))[0]?.status, 'none');
      assert.equal(announced, 1, 'nothing to deliver, nothing announced');
    });

    it('commits what goes alongside with the call, and nothing of either when it fails', async () => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, 10_000);
      const claim = { workspaceId: ws, key: 'k-1', requestHash: 'h', ttlMs: 60_000 };
      assert.deepEqual(await store.idempotency.begin(claim), { claimed: true });
      const keep = (fail: boolean) => async (repos: Repositories, call: CallRecord) => {
        await repos.idempotency.complete(ws, 'k-1', 202, JSON.stringify({ id: call.id }), 60_000);
        if (fail) throw new Error('the connection broke as it committed');
      };
      const before = await footprint(ws);
      await assert.rejects(admitCall(store, request(ws, agentId), {}, keep(true)), /broke/);
      assert.deepEqual(await footprint(ws), before, 'no call, no hold, no event');
      await store.idempotency.abandon(ws, 'k-1');
      assert.deepEqual(await store.idempotency.begin(claim), { claimed: true }, 'the key is free again');

      const call = await admitCall(store, request(ws, agentId), {}, keep(false));
      const replay = await store.idempotency.begin(claim);
      assert.equal(replay.claimed, false);
      if (replay.claimed) return;
      assert.equal(replay.record.status, 'done');
      assert.equal(replay.record.responseBody, JSON.stringify({ id: call.id }));
      await store.idempotency.abandon(ws, 'k-1');
      assert.equal(
        (await store.idempotency.begin(claim)).claimed,
        false,
        'a kept response is never given up',
      );
    });
  });
}
