/**
 * The call lifecycle after admission, on SQLite always and PostgreSQL when DATABASE_URL is set: each transition
 * with its event, settlement of every ending with money exact to the paisa in the ledger, settlement twice as a
 * no-op, abort, and orphan recovery.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { isApiError } from '../errors.ts';
import { rupeesToPaise } from '../money.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { CallRecord, Store } from '../store/types.ts';
import { admitCall } from './admission.ts';
import { CallLifecycle } from './lifecycle.ts';
import { callObject } from './representation.ts';
import type { EndTrigger } from './state-machine.ts';
import { fundedWorkspace } from './testing/workspaces.ts';

const targets = await storeTargets('lifecycle');
const START_PAISE = 100_000;

for (const target of targets) {
  describe(`call lifecycle on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    let lifecycle: CallLifecycle;
    let announced = 0;

    before(async () => {
      store = await target.open(clock);
      lifecycle = new CallLifecycle({ store, clock, announce: () => announced++ });
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    /** A funded workspace with one admitted call, moved on to `stage`. */
    const callAt = async (
      stage: 'queued' | 'dialing' | 'in_progress',
      options: { tier?: string; maxDurationSecs?: number } = {},
    ) => {
      const { workspaceId: ws, agentId } = await fundedWorkspace(store, START_PAISE);
      const call = await admitCall(store, {
        workspaceId: ws,
        agentId,
        to: '+919812345678',
        variables: { secret_code: 'do-not-echo' },
        webhookUrl: 'https://hooks.example.com/calls',
        ...options,
      });
      if (stage !== 'queued')
        await lifecycle.markDialing(ws, call.id, { gatewayNode: 'gw-a', carrier: 'sandbox' });
      if (stage === 'in_progress') {
        clock.advance(2_500);
        await lifecycle.markAnswered(ws, call.id);
      }
      return { ws, call };
    };
    const ledgerFor = async (ws: string, callId: string) =>
      (await store.wallet.transactions(ws, { limit: 100 })).items.filter((e) => e.reference === callId);

    it('dials, answers with call.started, and completes with call.completed, billing the live seconds', async () => {
      const { ws, call } = await callAt('queued');
      assert.equal(await lifecycle.markAnswered(ws, call.id), undefined, 'a queued call cannot be answered');
      const dialing = await lifecycle.markDialing(ws, call.id, { gatewayNode: 'gw-a', carrier: 'sandbox' });
      assert.equal(dialing?.status, 'dialing');
      assert.equal(dialing?.dialingAt, clock.now());
      assert.equal(dialing?.gatewayNode, 'gw-a');
      assert.equal(await lifecycle.markDialing(ws, call.id), undefined, 'dialled once');

      clock.advance(4_000);
      const before = announced;
      const live = await lifecycle.markAnswered(ws, call.id);
      assert.equal(live?.status, 'in_progress');
      assert.equal(live?.answeredAt, clock.now());
      assert.equal(announced, before + 1);
      const [started] = await store.events.listForCall(ws, call.id);
      assert.equal(started?.type, 'call.started');
      assert.deepEqual(JSON.parse(started?.body ?? '').data.call, callObject(live as CallRecord));

      clock.advance(61_200);
      const result = await lifecycle.settle(ws, call.id, 'assistant_hangup');
      assert.ok(result.settled);
      const ended = result.call;
      assert.equal(ended.status, 'completed');
      assert.equal(ended.endedReason, 'assistant-ended-call');
      assert.equal(ended.durationSecs, 62);
      assert.equal(ended.costPaise, 310, '62 started seconds at 5 paise a second');
      assert.deepEqual(await store.calls.get(ws, call.id), ended);
      const body = JSON.parse(result.event.body);
      assert.equal(body.type, 'call.completed');
      assert.deepEqual(body.data.call, callObject(ended));
      assert.equal(body.data.call.cost.amount_inr, 3.1);
      assert.equal(body.data.call.duration_secs, 62);
      assert.ok(!result.event.body.includes('do-not-echo'));
      assert.equal(announced, before + 2);

      assert.deepEqual(
        (await ledgerFor(ws, call.id)).map((e) => e.amountPaise),
        [-310],
      );
      assert.deepEqual(await store.wallet.balance(ws), {
        balancePaise: START_PAISE - 310,
        heldPaise: 0,
        availablePaise: START_PAISE - 310,
      });
      assert.equal((await store.wallet.getHold(ws, call.id))?.capturedPaise, 310);
    });

    const MONEY: Array<{
      name: string;
      stage: 'queued' | 'dialing' | 'in_progress';
      tier?: string;
      maxDurationSecs?: number;
      liveMs: number;
      outcome: EndTrigger;
      details?: { answeredAtBeforeEndMs: number };
      status: string;
      reason: string;
      durationSecs: number;
      costPaise: number;
    }> = [
      {
        name: 't1, 1 s',
        stage: 'in_progress',
        tier: 't1',
        liveMs: 1_000,
        outcome: 'customer_hangup',
        status: 'completed',
        reason: 'customer-ended-call',
        durationSecs: 1,
        costPaise: 2,
      },
      {
        name: 't1, 60 s',
        stage: 'in_progress',
        tier: 't1',
        liveMs: 60_000,
        outcome: 'assistant_hangup',
        status: 'completed',
        reason: 'assistant-ended-call',
        durationSecs: 60,
        costPaise: 100,
      },
      {
        name: 't1, 61 s',
        stage: 'in_progress',
        tier: 't1',
        liveMs: 61_000,
        outcome: 'assistant_hangup',
        status: 'completed',
        reason: 'assistant-ended-call',
        durationSecs: 61,
        costPaise: 102,
      },
      {
        name: 't3, 45 s',
        stage: 'in_progress',
        liveMs: 45_000,
        outcome: 'assistant_hangup',
        status: 'completed',
        reason: 'assistant-ended-call',
        durationSecs: 45,
        costPaise: 225,
      },
      {
        name: 't3, 45.001 s',
        stage: 'in_progress',
        liveMs: 45_001,
        outcome: 'customer_hangup',
        status: 'completed',
        reason: 'customer-ended-call',
        durationSecs: 46,
        costPaise: 230,
      },
      {
        name: 't3 timeout at 60 s',
        stage: 'in_progress',
        maxDurationSecs: 60,
        liveMs: 60_000,
        outcome: 'max_duration',
        status: 'timeout',
        reason: 'exceeded-max-duration',
        durationSecs: 60,
        costPaise: 300,
      },
      {
        name: 't3 timeout noticed late, capped at the hold',
        stage: 'in_progress',
        maxDurationSecs: 60,
        liveMs: 75_000,
        outcome: 'max_duration',
        status: 'timeout',
        reason: 'exceeded-max-duration',
        durationSecs: 75,
        costPaise: 300,
      },
      {
        name: 't3 voicemail mid-call',
        stage: 'in_progress',
        liveMs: 12_300,
        outcome: 'voicemail',
        status: 'voicemail',
        reason: 'voicemail',
        durationSecs: 13,
        costPaise: 65,
      },
      {
        name: 't1 voicemail while dialing, media live 4 s',
        stage: 'dialing',
        tier: 't1',
        liveMs: 9_000,
        outcome: 'voicemail',
        details: { answeredAtBeforeEndMs: 4_000 },
        status: 'voicemail',
        reason: 'voicemail',
        durationSecs: 4,
        costPaise: 7,
      },
      {
        name: 't3 pipeline error mid-call is free',
        stage: 'in_progress',
        liveMs: 30_000,
        outcome: 'pipeline_error',
        status: 'failed',
        reason: 'pipeline-error',
        durationSecs: 30,
        costPaise: 0,
      },
      {
        name: 't3 aborted mid-call is free',
        stage: 'in_progress',
        liveMs: 30_000,
        outcome: 'abort',
        status: 'aborted',
        reason: 'aborted-by-api',
        durationSecs: 30,
        costPaise: 0,
      },
      {
        name: 'no answer is free',
        stage: 'dialing',
        liveMs: 60_000,
        outcome: 'ring_timeout',
        status: 'no_answer',
        reason: 'customer-did-not-answer',
        durationSecs: 0,
        costPaise: 0,
      },
      {
        name: 'busy is free',
        stage: 'dialing',
        liveMs: 3_000,
        outcome: 'busy',
        status: 'busy',
        reason: 'customer-busy',
        durationSecs: 0,
        costPaise: 0,
      },
      {
        name: 'a queued call that cannot be dialled fails free',
        stage: 'queued',
        liveMs: 0,
        outcome: 'pipeline_error',
        status: 'failed',
        reason: 'pipeline-error',
        durationSecs: 0,
        costPaise: 0,
      },
    ];
    for (const c of MONEY) {
      it(`settles exactly: ${c.name} -> ${c.status}, ${c.durationSecs} s, ${c.costPaise} paise`, async () => {
        const { ws, call } = await callAt(c.stage, {
          ...(c.tier ? { tier: c.tier } : {}),
          ...(c.maxDurationSecs ? { maxDurationSecs: c.maxDurationSecs } : {}),
        });
        clock.advance(c.liveMs);
        const details = c.details ? { answeredAt: clock.now() - c.details.answeredAtBeforeEndMs } : {};
        const result = await lifecycle.settle(ws, call.id, c.outcome, details);
        assert.ok(result.settled);
        const ended = result.call;
        assert.equal(ended.status, c.status);
        assert.equal(ended.endedReason, c.reason);
        assert.equal(ended.durationSecs, c.durationSecs);
        assert.equal(ended.costPaise, c.costPaise);
        assert.equal(ended.endedAt, clock.now());
        const object = callObject(ended);
        assert.equal(object.started_at === null, c.durationSecs === 0 && c.stage !== 'in_progress');
        assert.equal(rupeesToPaise(object.cost.amount_inr), c.costPaise);
        const ledger = await ledgerFor(ws, call.id);
        assert.deepEqual(
          ledger.map((e) => e.amountPaise),
          c.costPaise > 0 ? [-c.costPaise] : [],
        );
        assert.deepEqual(await store.wallet.balance(ws), {
          balancePaise: START_PAISE - c.costPaise,
          heldPaise: 0,
          availablePaise: START_PAISE - c.costPaise,
        });
        const hold = await store.wallet.getHold(ws, call.id);
        assert.equal(hold?.status, c.costPaise > 0 ? 'captured' : 'released');
        const events = (await store.events.listForCall(ws, call.id)).filter((e) => e.type !== 'call.started');
        assert.equal(events.length, 1);
        assert.equal(events[0]?.id, result.event.id);
      });
    }

    it('settling again, by the same or another outcome, changes nothing', async () => {
      const { ws, call } = await callAt('in_progress');
      clock.advance(10_000);
      const first = await lifecycle.settle(ws, call.id, 'customer_hangup');
      assert.ok(first.settled);
      clock.advance(10_000);
      for (const outcome of ['customer_hangup', 'pipeline_error', 'max_duration', 'voicemail'] as const) {
        const again = await lifecycle.settle(ws, call.id, outcome);
        assert.equal(again.settled, false);
        assert.deepEqual(again.call, first.call);
      }
      assert.deepEqual(await store.calls.get(ws, call.id), first.call);
      assert.equal(
        (await store.events.listForCall(ws, call.id)).length,
        2,
        'call.started and call.completed',
      );
      assert.deepEqual(
        (await ledgerFor(ws, call.id)).map((e) => e.amountPaise),
        [-50],
      );
      assert.equal((await store.wallet.balance(ws)).balancePaise, START_PAISE - 50);
      assert.deepEqual(await lifecycle.settle(ws, 'call_01JAAAAAAAAAAAAAAAAAAAAAAA', 'busy'), {
        settled: false,
        call: undefined,
      });
    });

    it('aborts queued, dialing and live calls free, says which to hang up, and refuses ended ones', async () => {
      for (const [stage, hangUp] of [
        ['queued', false],
        ['dialing', true],
        ['in_progress', true],
      ] as const) {
        const { ws, call } = await callAt(stage);
        clock.advance(20_000);
        const aborted = await lifecycle.abort(ws, call.id);
        assert.equal(aborted.hangUp, hangUp, stage);
        assert.equal(aborted.call.status, 'aborted');
        assert.equal(aborted.call.endedReason, 'aborted-by-api');
        assert.equal(aborted.call.costPaise, 0);
        assert.equal((await store.wallet.balance(ws)).balancePaise, START_PAISE);
        assert.equal((await store.wallet.balance(ws)).heldPaise, 0);
        const terminal = (await store.events.listForCall(ws, call.id)).filter(
          (e) => e.type === 'call.aborted',
        );
        assert.equal(terminal.length, 1);
        await assert.rejects(lifecycle.abort(ws, call.id), (e) => isApiError(e) && e.code === 'conflict');
        await assert.rejects(
          lifecycle.abort((await fundedWorkspace(store, 0)).workspaceId, call.id),
          (e) => isApiError(e) && e.code === 'not_found',
        );
      }
    });

    it('recovers the live calls of a dead gateway node once, as failed and free', async () => {
      const node = `gw-dead-${Date.now()}`;
      const a = await callAt('in_progress');
      const b = await callAt('dialing');
      await store.calls.transition(a.ws, a.call.id, {
        from: ['in_progress'],
        to: 'in_progress',
        set: { gatewayNode: node },
      });
      await store.calls.transition(b.ws, b.call.id, {
        from: ['dialing'],
        to: 'dialing',
        set: { gatewayNode: node },
      });
      const elsewhere = await callAt('in_progress');
      clock.advance(30_000);
      const recovered = await Promise.all([
        lifecycle.recoverOrphans({ gatewayNode: node }),
        lifecycle.recoverOrphans({ gatewayNode: node }),
      ]);
      assert.deepEqual(
        recovered
          .flat()
          .map((c) => c.id)
          .sort(),
        [a.call.id, b.call.id].sort(),
      );
      for (const { ws, call } of [a, b]) {
        const ended = await store.calls.get(ws, call.id);
        assert.equal(ended?.status, 'failed');
        assert.equal(ended?.endedReason, 'pipeline-error');
        assert.match(ended?.error ?? '', /gateway node/);
        assert.equal(ended?.costPaise, 0);
        assert.equal((await store.wallet.balance(ws)).balancePaise, START_PAISE);
        assert.equal((await store.wallet.balance(ws)).heldPaise, 0);
        assert.equal(
          (await store.events.listForCall(ws, call.id)).filter((e) => e.type === 'call.failed').length,
          1,
        );
        const late = await lifecycle.settle(ws, call.id, 'customer_hangup');
        assert.equal(late.settled, false, 'a late hang-up from the gateway changes nothing');
      }
      assert.equal((await store.calls.get(elsewhere.ws, elsewhere.call.id))?.status, 'in_progress');
      assert.deepEqual(await lifecycle.recoverOrphans({ gatewayNode: node }), []);
    });

    it('recovers calls live longer than any call can be', async () => {
      const stale = await callAt('in_progress');
      clock.advance(40 * 60_000);
      const fresh = await callAt('in_progress');
      const recovered = (await lifecycle.recoverOrphans()).map((c) => c.id);
      assert.ok(recovered.includes(stale.call.id));
      assert.ok(!recovered.includes(fresh.call.id));
      assert.equal((await store.calls.get(fresh.ws, fresh.call.id))?.status, 'in_progress');
    });
  });
}
