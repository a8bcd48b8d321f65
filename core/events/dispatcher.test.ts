/**
 * The webhook dispatcher against a real local HTTPS receiver that verifies signatures as a customer must.
 * Attempts are driven by a manual clock (`deliverDue`), so the schedule is checked exactly without waiting;
 * the last case runs the dispatchers for real: one runner at a time, wake-ups, take-over after a runner died.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { admitCall } from '../calls/admission.ts';
import { CallLifecycle } from '../calls/lifecycle.ts';
import { fundedWorkspace } from '../calls/testing/workspaces.ts';
import { ManualClock } from '../clock.ts';
import { MemoryCoordinator } from '../coord/memory.ts';
import { isApiError } from '../errors.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { Store } from '../store/types.ts';
import { announceThrough } from './announce.ts';
import { WEBHOOK_USER_AGENT } from './delivery.ts';
import {
  type DeadLetter,
  DISPATCHER_LOCK_KEY,
  WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './dispatcher.ts';
import { DEFAULT_RETRY_SCHEDULE_MS } from './retry-schedule.ts';
import { makeCertificates, type TestCertificates, WebhookReceiver } from './testing/receiver.ts';

const targets = await storeTargets('dispatcher');
const FAR_FUTURE = Date.UTC(2100, 0, 1);

for (const target of targets) {
  describe(`webhook dispatcher on ${target.name}`, () => {
    const clock = new ManualClock();
    let store: Store;
    let certs: TestCertificates;
    let receiver: WebhookReceiver;
    /** The secrets the customer's endpoint holds. */
    let customerSecrets: string[] = [];
    /** The customer's clock for the signature window: the manual one, or real time for running dispatchers. */
    let customerNow = () => clock.now();
    const coord = new MemoryCoordinator();

    before(async () => {
      store = await target.open(clock);
      certs = makeCertificates();
      receiver = await WebhookReceiver.start({
        certs,
        secrets: () => customerSecrets,
        nowMs: () => customerNow(),
      });
    });
    after(async () => {
      await receiver.close();
      certs.cleanup();
      await coord.close();
      await store.close();
      await target.cleanup();
    });
    // Each case starts with an empty outbox: whatever a case left pending is dead-lettered.
    afterEach(async () => {
      for (const e of await store.events.due(FAR_FUTURE, 1_000)) {
        await store.events.recordAttempt(e.id, e.attempts + 1, {
          delivered: false,
          status: null,
          error: 'test over',
          retryAt: null,
        });
      }
    });

    const dispatcher = (options: Partial<WebhookDispatcherOptions> = {}) =>
      new WebhookDispatcher({ store, coord, clock, allowPrivate: true, extraCa: certs.caPem, ...options });
    /** A workspace with a webhook secret and a call admitted with `call.queued` on: one pending event. */
    const queuedEvent = async (webhookUrl: string) => {
      const { workspaceId, agentId } = await fundedWorkspace(store, 10_000, { queuedEvents: true });
      const secret = await store.secrets.createWebhookSecret(workspaceId);
      customerSecrets = [secret];
      const call = await admitCall(store, { workspaceId, agentId, to: '+919812345678', webhookUrl });
      const [event] = await store.events.listForCall(workspaceId, call.id);
      assert.ok(event);
      return { workspaceId, secret, call, event };
    };
    const requestsFor = (id: string) => receiver.requests.filter((r) => r.id === id);
    const signatureOf = (r: { headers: http.IncomingHttpHeaders }) =>
      String(r.headers['x-service-signature']);

    it('delivers every event of a call byte for byte, signed, with its headers', async () => {
      const { workspaceId, call } = await queuedEvent(receiver.url());
      const lifecycle = new CallLifecycle({ store, clock });
      await lifecycle.markDialing(workspaceId, call.id);
      await lifecycle.markAnswered(workspaceId, call.id);
      clock.advance(30_000);
      await lifecycle.settle(workspaceId, call.id, 'assistant_hangup');
      const d = dispatcher();
      assert.equal(await d.deliverDue(), 3);
      assert.equal(await d.deliverDue(), 0, 'nothing is due twice');
      await d.stop();
      const events = await store.events.listForCall(workspaceId, call.id);
      assert.deepEqual(
        events.map((e) => [e.type, e.status, e.attempts]),
        [
          ['call.queued', 'delivered', 1],
          ['call.started', 'delivered', 1],
          ['call.completed', 'delivered', 1],
        ],
      );
      for (const event of events) {
        const [received] = requestsFor(event.id);
        assert.ok(received, event.type);
        assert.ok(received.raw.equals(Buffer.from(event.body, 'utf8')), 'the stored bytes, unchanged');
        assert.deepEqual(received.verified, [{ ok: true }]);
        assert.equal(received.headers['content-type'], 'application/json');
        assert.equal(received.headers['user-agent'], WEBHOOK_USER_AGENT);
        assert.equal(received.headers['idempotency-key'], event.id);
        assert.equal(event.deliveredAt, clock.now());
      }
    });

    it('retries a failing receiver on the schedule: six attempts, then the dead-letter queue', async () => {
      const { event } = await queuedEvent(receiver.url());
      receiver.misbehave(...Array.from({ length: 6 }, () => ({ status: 500 })));
      const deadLetters: DeadLetter[] = [];
      const d = dispatcher({ onDeadLetter: (dead) => deadLetters.push(dead) });
      const schedule = DEFAULT_RETRY_SCHEDULE_MS;
      for (let k = 0; k < schedule.length; k++) {
        if (k > 0) {
          clock.advance((schedule[k] ?? 0) - 1);
          assert.equal(await d.deliverDue(), 0, `attempt ${k + 1} not before its time`);
          clock.advance(1);
        }
        const at = clock.now();
        assert.equal(await d.deliverDue(), 1, `attempt ${k + 1}`);
        const stored = await store.events.get(event.id);
        assert.equal(stored?.attempts, k + 1);
        assert.equal(stored?.lastStatus, 500);
        assert.equal(stored?.lastError, 'HTTP 500');
        if (k < schedule.length - 1) {
          assert.equal(deadLetters.length, 0, 'told only when the event is given up on');
          assert.equal(stored?.status, 'pending');
          assert.equal(stored?.nextAttemptAt, at + (schedule[k + 1] ?? 0));
        } else {
          assert.equal(stored?.status, 'dead');
          assert.equal(stored?.nextAttemptAt, null);
        }
      }
      clock.advance(24 * 3_600_000);
      assert.equal(await d.deliverDue(), 0, 'a dead event is not attempted again');
      await d.stop();
      const received = requestsFor(event.id);
      assert.equal(received.length, 6);
      for (const r of received) {
        assert.ok(r.raw.equals(Buffer.from(event.body)));
        assert.deepEqual(r.verified, [{ ok: true }]);
      }
      const dead = await store.events.listDead({ limit: 100 });
      assert.ok(dead.items.some((e) => e.id === event.id));
      assert.deepEqual(deadLetters, [
        {
          eventId: event.id,
          type: 'call.queued',
          workspaceId: event.workspaceId,
          callId: event.callId,
          attempts: 6,
          status: 500,
          error: 'HTTP 500',
        },
      ]);
    });

    it('retries a 500, a 401 from its own signature check and a slow answer; the receiver processes it once', async () => {
      const { event, secret } = await queuedEvent(receiver.url());
      const before = receiver.requests.length;
      const d = dispatcher({ timeoutMs: 300, retryScheduleMs: [0, 10, 20, 30, 40, 50] });
      receiver.misbehave({ status: 500 });
      await d.deliverDue();
      customerSecrets = [`whsec_${'0'.repeat(48)}`];
      clock.advance(1_000);
      await d.deliverDue();
      customerSecrets = [secret];
      receiver.misbehave({ delayMs: 1_000 });
      clock.advance(1_000);
      await d.deliverDue();
      let stored = await store.events.get(event.id);
      assert.equal(stored?.status, 'pending');
      assert.equal(stored?.attempts, 3);
      assert.equal(stored?.lastStatus, null);
      assert.match(stored?.lastError ?? '', /timeout|Timeout/);
      await receiver.waitFor(before + 3);
      clock.advance(1_000);
      await d.deliverDue();
      await d.stop();
      stored = await store.events.get(event.id);
      assert.equal(stored?.status, 'delivered');
      assert.equal(stored?.attempts, 4);
      assert.deepEqual(
        requestsFor(event.id).map((r) => r.answered),
        [500, 401, 200, 200],
        'the slow 200 came after the client had given up',
      );
      assert.ok(receiver.processed.has(event.id));
      assert.equal([...receiver.processed.keys()].filter((id) => id === event.id).length, 1);
    });

    it('replays a dead event byte for byte with a fresh signature, and marks it delivered', async () => {
      const { event, workspaceId } = await queuedEvent(receiver.url());
      receiver.misbehave({ status: 503 });
      const d = dispatcher({ retryScheduleMs: [0] });
      await d.deliverDue();
      assert.equal((await store.events.get(event.id))?.status, 'dead');
      const [first] = requestsFor(event.id);
      clock.advance(10 * 60_000);
      const report = await d.replay(event.id);
      assert.deepEqual(report, { eventId: event.id, delivered: true, status: 200, error: null });
      const [, replayed] = requestsFor(event.id);
      assert.ok(first && replayed);
      assert.ok(replayed.raw.equals(first.raw), 'byte-identical, same id');
      assert.notEqual(signatureOf(replayed), signatureOf(first), 'a fresh signature');
      assert.match(signatureOf(replayed), new RegExp(`^t=${Math.floor(clock.now() / 1_000)},`));
      assert.deepEqual(replayed.verified, [{ ok: true }], 'valid now, ten minutes after the first attempt');
      const stored = await store.events.get(event.id);
      assert.equal(stored?.status, 'delivered');
      assert.equal(stored?.attempts, 1, 'a replay is not a scheduled attempt');

      receiver.misbehave({ status: 500 });
      assert.deepEqual(await d.replay(event.id), {
        eventId: event.id,
        delivered: false,
        status: 500,
        error: 'HTTP 500',
      });
      await assert.rejects(
        d.replay('evt_01JAAAAAAAAAAAAAAAAAAAAAAA'),
        (e) => isApiError(e) && e.code === 'not_found',
      );
      const silent = await admitCall(store, {
        workspaceId,
        agentId: (await store.agents.list(workspaceId, { limit: 1 })).items[0]?.id ?? '',
        to: '+919812345678',
        webhookUrl: null,
      });
      const [none] = await store.events.listForCall(workspaceId, silent.id);
      assert.equal((await d.replay(none?.id ?? '')).delivered, false);
      await d.stop();
    });

    it('signs with both secrets during a rotation, and with the new one alone after the overlap', async () => {
      const { workspaceId, secret: old, call } = await queuedEvent(receiver.url());
      const fresh = await store.secrets.rotateWebhookSecret(workspaceId, 3_600_000);
      const d = dispatcher();
      customerSecrets = [old];
      await d.deliverDue();
      const lifecycle = new CallLifecycle({ store, clock });
      await lifecycle.markDialing(workspaceId, call.id);
      await lifecycle.markAnswered(workspaceId, call.id);
      customerSecrets = [fresh];
      await d.deliverDue();
      clock.advance(2 * 3_600_000);
      await lifecycle.settle(workspaceId, call.id, 'customer_hangup');
      customerSecrets = [old, fresh];
      await d.deliverDue();
      await d.stop();
      const [queued, started, completed] = await store.events.listForCall(workspaceId, call.id);
      const [q] = requestsFor(queued?.id ?? '');
      const [s] = requestsFor(started?.id ?? '');
      const [c] = requestsFor(completed?.id ?? '');
      assert.ok(q && s && c);
      assert.equal(signatureOf(q).split(',v1=').length, 3, 'two signatures during the overlap');
      assert.deepEqual(q.verified, [{ ok: true }], 'a customer still on the old secret');
      assert.deepEqual(s.verified, [{ ok: true }], 'a customer already on the new secret');
      assert.equal(signatureOf(c).split(',v1=').length, 2, 'one signature after the overlap');
      assert.deepEqual(c.verified, [{ ok: false, reason: 'mismatch' }, { ok: true }]);
    });

    it('refuses internal addresses without allowPrivate, and never calls an http:// URL', async () => {
      const seen: string[] = [];
      const plain = http.createServer((req, res) => {
        seen.push(req.url ?? '');
        res.end();
      });
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      try {
        const strict = dispatcher({ allowPrivate: false });
        const byIp = await queuedEvent(receiver.url('127.0.0.1'));
        const byName = await queuedEvent(receiver.url('localhost'));
        await strict.deliverDue();
        await strict.stop();
        for (const { event } of [byIp, byName]) {
          const stored = await store.events.get(event.id);
          assert.equal(stored?.status, 'pending', 'refused like any failure, retried later');
          assert.match(stored?.lastError ?? '', /internal address/);
          assert.equal(requestsFor(event.id).length, 0);
        }

        const insecure = await queuedEvent(`http://127.0.0.1:${(plain.address() as AddressInfo).port}/hooks`);
        const d = dispatcher();
        await d.deliverDue();
        await d.stop();
        const stored = await store.events.get(insecure.event.id);
        assert.equal(stored?.status, 'dead', 'no attempt can succeed');
        assert.match(stored?.lastError ?? '', /https/);
        assert.deepEqual(seen, []);
      } finally {
        await new Promise((resolve) => plain.close(resolve));
      }
    });

    it('retries a TLS failure (a certificate it does not trust)', async () => {
      const { event } = await queuedEvent(receiver.url());
      const d = dispatcher({ extraCa: undefined });
      await d.deliverDue();
      await d.stop();
      const stored = await store.events.get(event.id);
      assert.equal(stored?.status, 'pending');
      assert.equal(stored?.attempts, 1);
      assert.match(stored?.lastError ?? '', /CERT|certificate/i);
      assert.equal(requestsFor(event.id).length, 0);
    });

    it('does not spin while a slow attempt is in flight', async () => {
      const live = await target.open();
      customerNow = Date.now;
      let lookups = 0;
      const events = new Proxy(live.events, {
        get(repo, name, receiver) {
          if (name === 'nextDueAt') lookups++;
          const value = Reflect.get(repo, name, receiver);
          return typeof value === 'function' ? value.bind(repo) : value;
        },
      });
      const counted = Object.create(live, { events: { value: events } }) as Store;
      const runner = new WebhookDispatcher({
        store: counted,
        coord: new MemoryCoordinator(),
        allowPrivate: true,
        extraCa: certs.caPem,
        pollMs: 60_000,
      });
      try {
        await runner.start();
        const { workspaceId, agentId } = await fundedWorkspace(live, 10_000, { queuedEvents: true });
        customerSecrets = [await live.secrets.createWebhookSecret(workspaceId)];
        receiver.misbehave({ delayMs: 1_500 });
        const call = await admitCall(live, {
          workspaceId,
          agentId,
          to: '+919812345678',
          webhookUrl: receiver.url(),
        });
        const [event] = await live.events.listForCall(workspaceId, call.id);
        for (;;) {
          if ((await live.events.get(event?.id ?? ''))?.status === 'delivered') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.ok(lookups < 20, `${lookups} looks at the outbox during one slow attempt`);
      } finally {
        await runner.stop();
        await live.close();
        customerNow = () => clock.now();
      }
    });

    it('runs as one runner at a time, wakes on announcements, retries by the schedule, and a standby takes over', async () => {
      const live = await target.open();
      customerNow = Date.now;
      const runners: WebhookDispatcher[] = [];
      let bothLed = false;
      const watch = setInterval(() => {
        if (runners.filter((r) => r.isLeader).length > 1) bothLed = true;
      }, 5);
      try {
        // A runner that died holding the lock: nobody renews it, it lapses after its TTL.
        assert.ok(await coord.lock(DISPATCHER_LOCK_KEY, 300));
        const options = {
          store: live,
          coord,
          allowPrivate: true,
          extraCa: certs.caPem,
          retryScheduleMs: [0, 150, 300, 450, 600, 750],
          lockTtlMs: 300,
          leaderRetryMs: 50,
          pollMs: 60_000,
        };
        runners.push(new WebhookDispatcher(options), new WebhookDispatcher(options));
        for (const r of runners) await r.start();
        assert.deepEqual(
          runners.map((r) => r.isLeader),
          [false, false],
          'the dead runner still holds the lock',
        );

        const { workspaceId, agentId } = await fundedWorkspace(live, 10_000, { queuedEvents: true });
        customerSecrets = [await live.secrets.createWebhookSecret(workspaceId)];
        const announce = announceThrough(coord);
        const deliveredOf = async (webhookFailures: number) => {
          receiver.misbehave(...Array.from({ length: webhookFailures }, () => ({ status: 500 })));
          const call = await admitCall(
            live,
            { workspaceId, agentId, to: '+919812345678', webhookUrl: receiver.url() },
            { announce },
          );
          const [event] = await live.events.listForCall(workspaceId, call.id);
          assert.ok(event);
          for (;;) {
            const stored = await live.events.get(event.id);
            if (stored?.status === 'delivered') return stored;
            assert.notEqual(stored?.status, 'dead', stored?.lastError ?? '');
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        };

        const first = await deliveredOf(2);
        // Which attempts reached the receiver and what it answered: a failure that was not one of the two 500s
        // shows here (a 401 from the signature check, or an attempt that never arrived).
        const answered = requestsFor(first.id).map((r) => r.answered);
        assert.equal(first.attempts, 3, `receiver answered ${JSON.stringify(answered)}`);
        const arrivals = requestsFor(first.id).map((r) => r.receivedAt);
        assert.equal(arrivals.length, 3);
        assert.ok((arrivals[1] ?? 0) - (arrivals[0] ?? 0) >= 150, 'the second attempt waited its delay');
        assert.ok((arrivals[2] ?? 0) - (arrivals[1] ?? 0) >= 300, 'the third attempt waited its delay');
        const leader = runners.find((r) => r.isLeader);
        assert.ok(leader, 'a standby took over the lapsed lock');

        // The runner is idle (its poll is a minute away): only the announcement can make this prompt.
        assert.equal((await deliveredOf(0)).attempts, 1);

        await leader.stop();
        runners.splice(runners.indexOf(leader), 1);
        assert.equal((await deliveredOf(0)).attempts, 1, 'the other runner delivers once the first is gone');
        assert.equal(runners[0]?.isLeader, true);
        assert.equal(bothLed, false, 'never two runners at once');
      } finally {
        clearInterval(watch);
        customerNow = () => clock.now();
        for (const r of runners) await r.stop();
        await live.close();
      }
    });
  });
}
