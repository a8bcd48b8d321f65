/**
 * Conformance of the call and event repositories, on SQLite always and PostgreSQL when DATABASE_URL is set:
 * what is written, tenancy, the list and its filters, the dialer's FIFO, the open-call count, conditional
 * transitions (exactly one winner of a race), orphan queries, artifacts, and the outbox's delivery bookkeeping.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../clock.ts';
import { newId } from '../ids.ts';
import { storeTargets } from './testing/targets.ts';
import type { CallRecord, NewCall, Store } from './types.ts';

const targets = await storeTargets('calls');

for (const target of targets) {
  describe(`calls and events on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    const workspace = async () => (await store.workspaces.create({ name: 'Acme', mode: 'production' })).id;
    const agent = async (ws: string) => (await store.agents.create(ws, { name: 'Asha' })).id;
    const newCall = (ws: string, agentId: string, extra: Partial<NewCall> = {}): NewCall => ({
      id: newId('call', clock.now()),
      workspaceId: ws,
      agentId,
      agentRevision: 1,
      channel: 'phone',
      toNumber: '+919812345678',
      tier: 't3',
      perMinPaise: 300,
      maxDurationSecs: 300,
      variables: { name: 'Ravi', order: 42 },
      webhookUrl: 'https://hooks.example.com/calls',
      ...extra,
    });

    before(async () => {
      store = await target.open(clock);
    });
    after(async () => {
      await store.close();
      await target.cleanup();
    });

    describe('calls', () => {
      it('inserts a queued call and reads it back only in its own workspace', async () => {
        const ws = await workspace();
        const a = await agent(ws);
        const input = newCall(ws, a, { poolId: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' });
        const call = await store.calls.insert(input);
        const expected: CallRecord = {
          id: input.id,
          workspaceId: ws,
          agentId: a,
          agentRevision: 1,
          channel: 'phone',
          toNumber: '+919812345678',
          fromNumber: null,
          tier: 't3',
          perMinPaise: 300,
          maxDurationSecs: 300,
          variables: { name: 'Ravi', order: 42 },
          webhookUrl: 'https://hooks.example.com/calls',
          phoneNumberId: null,
          poolId: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA',
          campaignId: null,
          direction: 'outbound',
          status: 'queued',
          endedReason: null,
          carrier: null,
          carrierCallId: null,
          gatewayNode: null,
          createdAt: clock.now(),
          dialingAt: null,
          answeredAt: null,
          endedAt: null,
          durationSecs: 0,
          costPaise: 0,
          transcriptAvailable: false,
          recordingAvailable: false,
          analysis: null,
          latency: null,
          error: null,
        };
        assert.deepEqual(call, expected);
        assert.deepEqual(await store.calls.get(ws, call.id), expected);
        assert.equal(await store.calls.get(await workspace(), call.id), undefined);
        const raw = (await target.rawRows('calls')).find((r) => r['id'] === call.id);
        assert.equal(raw?.['variables'], '{"name":"Ravi","order":42}');
      });

      it('refuses a status outside the ten and a channel outside phone/web', async () => {
        const ws = await workspace();
        const a = await agent(ws);
        await assert.rejects(store.calls.insert(newCall(ws, a, { channel: 'sip' as 'web' })));
        const call = await store.calls.insert(newCall(ws, a));
        await assert.rejects(
          store.calls.transition(ws, call.id, { from: ['queued'], to: 'ringing' as 'dialing' }),
        );
      });

      it('lists newest first with status, agent and created range filters, page by page', async () => {
        const ws = await workspace();
        const [a, b] = [await agent(ws), await agent(ws)];
        const made: CallRecord[] = [];
        for (let i = 0; i < 5; i++) {
          clock.advance(1_000);
          made.push(await store.calls.insert(newCall(ws, i % 2 === 0 ? a : b)));
        }
        await store.calls.insert(newCall(await workspace(), await agent(await workspace())));
        await store.calls.transition(ws, made[1]!.id, { from: ['queued'], to: 'dialing' });
        const ids = (page: { items: CallRecord[] }) => page.items.map((c) => c.id);
        const all = [...made].reverse().map((c) => c.id);

        const first = await store.calls.list(ws, { limit: 2 });
        assert.deepEqual(ids(first), all.slice(0, 2));
        assert.equal(first.hasMore, true);
        const rest = await store.calls.list(ws, { limit: 10, after: all[1] });
        assert.deepEqual(ids(rest), all.slice(2));
        assert.equal(rest.hasMore, false);

        assert.deepEqual(ids(await store.calls.list(ws, { limit: 10, status: 'dialing' })), [made[1]!.id]);
        assert.deepEqual(
          ids(await store.calls.list(ws, { limit: 10, status: ['dialing', 'queued'], agentId: b })),
          [made[3]!.id, made[1]!.id],
        );
        assert.deepEqual(
          ids(
            await store.calls.list(ws, {
              limit: 10,
              createdFrom: made[1]!.createdAt,
              createdTo: made[3]!.createdAt,
            }),
          ),
          [made[2]!.id, made[1]!.id],
        );
      });

      it('counts open and live calls, and hands out queued calls oldest first', async () => {
        const ws = await workspace();
        const a = await agent(ws);
        const liveBefore = await store.calls.countLiveAll();
        const calls: CallRecord[] = [];
        for (let i = 0; i < 4; i++) calls.push(await store.calls.insert(newCall(ws, a)));
        await store.calls.transition(ws, calls[0]!.id, { from: ['queued'], to: 'dialing' });
        await store.calls.transition(ws, calls[1]!.id, { from: ['queued'], to: 'aborted' });
        assert.equal(await store.calls.countOpen(ws), 3);
        assert.equal(await store.calls.countLive(ws), 1);
        // Across workspaces: this one's live call, and those other cases left live.
        assert.equal(await store.calls.countLiveAll(), liveBefore + 1);
        assert.deepEqual(
          (await store.calls.nextQueued(ws, 5)).map((c) => c.id),
          [calls[2]!.id, calls[3]!.id],
        );
        assert.deepEqual(
          (await store.calls.nextQueued(ws, 1)).map((c) => c.id),
          [calls[2]!.id],
        );
        assert.ok((await store.calls.workspacesWithQueued()).includes(ws));
        const idle = await workspace();
        await store.calls.insert(newCall(idle, await agent(idle)));
        const drained = await workspace();
        const d = await store.calls.insert(newCall(drained, await agent(drained)));
        await store.calls.transition(drained, d.id, { from: ['queued'], to: 'aborted' });
        const withQueued = await store.calls.workspacesWithQueued();
        assert.ok(withQueued.includes(idle));
        assert.ok(!withQueued.includes(drained));
      });

      it('transitions only from an allowed state, sets columns with it, and lets one of many racers win', async () => {
        const ws = await workspace();
        const a = await agent(ws);
        const call = await store.calls.insert(newCall(ws, a));
        assert.equal(
          await store.calls.transition(ws, call.id, { from: ['dialing'], to: 'in_progress' }),
          undefined,
        );
        assert.equal(await store.calls.transition(ws, call.id, { from: [], to: 'dialing' }), undefined);
        assert.equal(
          await store.calls.transition(await workspace(), call.id, { from: ['queued'], to: 'dialing' }),
          undefined,
          'another workspace cannot move it',
        );
        const dialing = await store.calls.transition(ws, call.id, {
          from: ['queued'],
          to: 'dialing',
          set: {
            dialingAt: clock.now(),
            gatewayNode: 'gw-1',
            carrier: 'sandbox',
            fromNumber: '+918000000000',
          },
        });
        assert.equal(dialing?.status, 'dialing');
        assert.equal(dialing?.gatewayNode, 'gw-1');
        assert.equal(dialing?.fromNumber, '+918000000000');
        assert.deepEqual(await store.calls.get(ws, call.id), dialing);

        const racers = await Promise.all(
          (['completed', 'aborted', 'failed', 'voicemail', 'aborted', 'timeout'] as const).map((to) =>
            store.calls.transition(ws, call.id, {
              from: ['dialing', 'in_progress'],
              to,
              set: { endedAt: clock.now(), endedReason: to },
            }),
          ),
        );
        const winners = racers.filter((r) => r !== undefined);
        assert.equal(winners.length, 1);
        const stored = await store.calls.get(ws, call.id);
        assert.equal(stored?.status, winners[0]?.status);
        assert.equal(stored?.endedReason, winners[0]?.status);
      });

      it('finds live calls per gateway node and by age for orphan recovery', async () => {
        const ws = await workspace();
        const a = await agent(ws);
        const node = `gw-${newId('call')}`;
        const old = await store.calls.insert(newCall(ws, a));
        await store.calls.transition(ws, old.id, {
          from: ['queued'],
          to: 'dialing',
          set: { dialingAt: clock.now(), gatewayNode: node },
        });
        clock.advance(60_000);
        const recent = await store.calls.insert(newCall(ws, a));
        await store.calls.transition(ws, recent.id, {
          from: ['queued'],
          to: 'in_progress',
          set: { dialingAt: clock.now(), gatewayNode: node },
        });
        const ended = await store.calls.insert(newCall(ws, a));
        await store.calls.transition(ws, ended.id, {
          from: ['queued'],
          to: 'completed',
          set: { dialingAt: clock.now(), gatewayNode: node },
        });
        assert.deepEqual(
          (await store.calls.liveOnNode(node)).map((c) => c.id),
          [old.id, recent.id],
        );
        assert.deepEqual(await store.calls.liveOnNode('gw-none'), []);
        const older = (await store.calls.liveOlderThan(30_000)).map((c) => c.id);
        assert.ok(older.includes(old.id));
        assert.ok(!older.includes(recent.id));
      });

      it('records the carrier call, artifacts, analysis and latency', async () => {
        const turn = (ms: number) => ({
          endpoint_ms: 300,
          stt_final_ms: 120,
          llm_first_token_ms: 200,
          tts_first_audio_ms: 80,
          voice_to_voice_ms: ms,
          pipeline_overhead_ms: 4.5,
        });
        const latency = { turns: 3, p50: turn(640), p95: turn(990) };
        const ws = await workspace();
        const call = await store.calls.insert(newCall(ws, await agent(ws)));
        assert.equal(
          await store.calls.setCarrierCall(ws, call.id, { carrier: 'twilio', carrierCallId: 'CA1' }),
          true,
        );
        assert.equal(await store.calls.setArtifacts(ws, call.id, { transcriptAvailable: true }), true);
        assert.equal(await store.calls.setArtifacts(ws, call.id, { recordingAvailable: true }), true);
        assert.equal(await store.calls.setAnalysis(ws, call.id, { summary: 'ok', success: true }), true);
        assert.equal(await store.calls.setLatency(ws, call.id, latency), true);
        assert.equal(await store.calls.setAnalysis(await workspace(), call.id, {}), false);
        const stored = await store.calls.get(ws, call.id);
        assert.equal(stored?.carrier, 'twilio');
        assert.equal(stored?.carrierCallId, 'CA1');
        assert.equal(stored?.transcriptAvailable, true);
        assert.equal(stored?.recordingAvailable, true);
        assert.deepEqual(stored?.analysis, { summary: 'ok', success: true });
        assert.deepEqual(stored?.latency, latency);
      });
    });

    describe('events', () => {
      const event = (ws: string, callId: string, webhookUrl: string | null) => {
        const id = newId('event', clock.now());
        return {
          id,
          workspaceId: ws,
          callId,
          type: 'call.completed',
          createdAt: clock.now(),
          body: `{"id":"${id}","type":"call.completed","data":{"call":{"id":"${callId}","é":"ü"}}}`,
          webhookUrl,
        };
      };

      it('stores the body byte for byte, pending and due now with a URL, none without', async () => {
        const ws = await workspace();
        const input = event(ws, 'call_x', 'https://hooks.example.com/a');
        const pending = await store.events.append(input);
        assert.equal(pending.status, 'pending');
        assert.equal(pending.nextAttemptAt, clock.now());
        assert.equal(pending.attempts, 0);
        assert.deepEqual(await store.events.get(input.id), pending);
        assert.equal((await store.events.get(input.id))?.body, input.body);
        const none = await store.events.append(event(ws, 'call_x', null));
        assert.equal(none.status, 'none');
        assert.equal(none.nextAttemptAt, null);
        assert.deepEqual(
          (await store.events.listForCall(ws, 'call_x')).map((e) => e.id),
          [pending.id, none.id],
        );
        assert.deepEqual(await store.events.listForCall(await workspace(), 'call_x'), []);
      });

      it('hands out due events oldest first and says when the next falls due', async () => {
        const ws = await workspace();
        clock.advance(10_000);
        const due = await store.events.due(clock.now(), 1_000);
        for (const e of due)
          await store.events.recordAttempt(e.id, e.attempts + 1, { delivered: true, status: 200 });
        assert.equal(await store.events.nextDueAt(), undefined);
        const first = await store.events.append(event(ws, 'call_a', 'https://h.example.com'));
        clock.advance(5);
        const second = await store.events.append(event(ws, 'call_b', 'https://h.example.com'));
        assert.equal(await store.events.nextDueAt(), first.createdAt);
        assert.deepEqual(
          (await store.events.due(clock.now(), 10)).map((e) => e.id),
          [first.id, second.id],
        );
        assert.deepEqual(
          (await store.events.due(first.createdAt, 10)).map((e) => e.id),
          [first.id],
        );
        assert.ok(
          await store.events.recordAttempt(first.id, 1, {
            delivered: false,
            status: 500,
            error: 'HTTP 500',
            retryAt: clock.now() + 1_000,
          }),
        );
        assert.deepEqual(
          (await store.events.due(clock.now(), 10)).map((e) => e.id),
          [second.id],
        );
        assert.equal(await store.events.nextDueAt(), second.createdAt);
        await store.events.recordAttempt(second.id, 1, { delivered: true, status: 204 });
        assert.equal(await store.events.nextDueAt(), clock.now() + 1_000);
      });

      it('records each attempt once, then delivered or dead; replays note results and deliver', async () => {
        const ws = await workspace();
        const e = await store.events.append(event(ws, 'call_c', 'https://h.example.com'));
        const failure = { delivered: false as const, status: null, error: 'x'.repeat(2_000), retryAt: 5 };
        assert.equal(await store.events.recordAttempt(e.id, 2, failure), false, 'attempt 1 first');
        const twice = await Promise.all([
          store.events.recordAttempt(e.id, 1, failure),
          store.events.recordAttempt(e.id, 1, failure),
        ]);
        assert.deepEqual(twice.sort(), [false, true]);
        let stored = await store.events.get(e.id);
        assert.equal(stored?.attempts, 1);
        assert.equal(stored?.lastError?.length, 500);
        assert.equal(stored?.nextAttemptAt, 5);
        assert.ok(await store.events.recordAttempt(e.id, 2, { ...failure, status: 503, retryAt: null }));
        stored = await store.events.get(e.id);
        assert.equal(stored?.status, 'dead');
        assert.equal(stored?.lastStatus, 503);
        assert.equal(stored?.nextAttemptAt, null);
        assert.equal(await store.events.recordAttempt(e.id, 3, failure), false, 'dead stays dead');

        const dead = await store.events.listDead({ workspaceId: ws, limit: 10 });
        assert.deepEqual(
          dead.items.map((d) => d.id),
          [e.id],
        );
        assert.ok((await store.events.listDead({ limit: 1_000 })).items.some((d) => d.id === e.id));
        assert.deepEqual(
          (await store.events.listDead({ workspaceId: await workspace(), limit: 10 })).items,
          [],
        );

        await store.events.recordReplay(e.id, { delivered: false, status: 401, error: 'HTTP 401' });
        stored = await store.events.get(e.id);
        assert.equal(stored?.status, 'dead');
        assert.equal(stored?.lastStatus, 401);
        clock.advance(1);
        await store.events.recordReplay(e.id, { delivered: true, status: 200, error: null });
        stored = await store.events.get(e.id);
        assert.equal(stored?.status, 'delivered');
        assert.equal(stored?.deliveredAt, clock.now());
        assert.equal(stored?.attempts, 2, 'replays are not scheduled attempts');
        assert.equal(stored?.body, e.body);
        assert.deepEqual((await store.events.listDead({ workspaceId: ws, limit: 10 })).items, []);
      });

      it('pages the dead letters newest first', async () => {
        const ws = await workspace();
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const e = await store.events.append(event(ws, `call_${i}`, 'https://h.example.com'));
          await store.events.recordAttempt(e.id, 1, {
            delivered: false,
            status: 500,
            error: 'no',
            retryAt: null,
          });
          ids.unshift(e.id);
        }
        const first = await store.events.listDead({ workspaceId: ws, limit: 2 });
        assert.deepEqual(
          first.items.map((e) => e.id),
          ids.slice(0, 2),
        );
        assert.equal(first.hasMore, true);
        const rest = await store.events.listDead({ workspaceId: ws, limit: 2, after: ids[1] });
        assert.deepEqual(
          rest.items.map((e) => e.id),
          ids.slice(2),
        );
      });
    });
  });
}
