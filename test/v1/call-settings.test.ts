/**
 * A v1 assistant's `callSettings` on the calls it places, end to end (api, gateway and worker in one process,
 * the sandbox carrier): `concurrentCallCount` 1 dials its second call only once the first has ended, and
 * `slots` keep a call queued (`initiate`) until the assistant's clock enters them, and `retryProtocol` places an
 * unanswered call again once `reAttemptPeriod` has passed, up to `maxAttemptsNoPickup` attempts; time moved by
 * the injectable clock rather than waited for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../core/clock.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { V1_HOST, v1Client } from './support.ts';

interface CallBody {
  status: string;
  started_at: string | null;
  ended_at: string | null;
}

const ENDED = ['completed', 'failed', 'timeout', 'no_answer', 'busy', 'voicemail', 'aborted'];
const HOUR_MS = 3_600_000;

/** HH:MM on the clock of Asia/Kolkata (UTC+5:30, no daylight saving) at `instant`. */
function kolkata(instant: number): string {
  const minutes = Math.floor((instant + 5.5 * HOUR_MS) / 60_000) % (24 * 60);
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

describe("a v1 assistant's calling hours, concurrency and retries on the calls it places (sqlite+memory)", () => {
  let p: TestPlatform;
  let v1: ReturnType<typeof v1Client>;
  let v2: ReturnType<typeof client>;
  let offsetMs = 0;
  const clock: Clock = { now: () => Date.now() + offsetMs };

  before(async () => {
    p = await startTestPlatform(
      { name: 'sqlite+memory' },
      {
        env: { ROLES: 'api,gateway,worker', V1_HOST, ALLOW_PRIVATE_WEBHOOKS: '1', SANDBOX_RING_MS: '300' },
        clock,
      },
    );
    const workspace = await provisionWorkspace(p.platform.store, {
      name: 'Shop',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    v1 = v1Client(p.url, workspace.v1);
    v2 = client(p.url, workspace.api_key);
  });
  after(() => p?.close());

  const assistant = async (callSettings: Record<string, unknown>) => {
    const created = await v1<{ data: { _id: string } }>('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'Hours',
        variant: { type: 'order_confirmation' },
        timezone: 'Asia/Kolkata',
        callSettings: { maxCallDuration: 60, ...callSettings },
      },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data._id;
  };
  // The sandbox callee of a number ending in 4 answers, then hangs up after about 2 s; with 5 the carrier fails
  // the call at once.
  const initiate = async (id: string, phoneNumber = '+919876543214') => {
    const r = await v1<{ callId: string; status: string }>('POST', '/v2/call/initiate', {
      body: { phoneNumber, assistant: id },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'initiate');
    return r.body.callId;
  };
  const call = async (id: string) => (await v2<CallBody>('GET', `/v2/calls/${id}`)).body;
  const ended = async (ids: string[]) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const calls = await Promise.all(ids.map(call));
      if (calls.every((c) => ENDED.includes(c.status))) return calls;
      if (Date.now() > deadline) assert.fail(`not ended: ${JSON.stringify(calls)}`);
      await sleep(200);
    }
  };

  test('concurrentCallCount 1: the second call is dialled once the first has ended', async () => {
    const id = await assistant({ concurrentCallCount: 1 });
    const first = await initiate(id);
    const second = await initiate(id);
    const [a, b] = await ended([first, second]);
    assert.equal(a?.status, 'completed');
    assert.equal(b?.status, 'completed');
    assert.ok(a?.ended_at && b?.started_at);
    assert.ok(Date.parse(b.started_at) >= Date.parse(a.ended_at), `${a.ended_at} then ${b.started_at}`);
  });

  test('slots: a call waits queued outside them and is dialled once its assistant is inside one', async () => {
    const now = clock.now();
    const id = await assistant({
      slots: [{ startTime: kolkata(now + 2 * HOUR_MS), endTime: kolkata(now + 3 * HOUR_MS) }],
    });
    const held = await initiate(id, '+919876543215');
    // Dialer passes: on the admission, then one a second.
    await sleep(1_500);
    assert.equal((await call(held)).status, 'queued', 'outside its slots the call waits');
    offsetMs += 2 * HOUR_MS + 5 * 60_000;
    const [done] = await ended([held]);
    assert.equal(done?.status, 'failed', 'dialled (the carrier of a number ending in 5 fails every call)');
  });

  test('retryProtocol: an unanswered call is placed again after reAttemptPeriod, up to maxAttemptsNoPickup', async () => {
    const id = await assistant({ retryProtocol: { maxAttemptsNoPickup: 2, reAttemptPeriod: 1 } });
    const ofAssistant = async () =>
      (
        await v2<{ data: Array<{ id: string; agent_id: string; status: string }> }>(
          'GET',
          '/v2/calls?limit=100',
        )
      ).body.data.filter((c) => c.agent_id === id);
    // The sandbox callee of a number ending in 1 never answers (it rings SANDBOX_RING_MS).
    const first = await initiate(id, '+919876543211');
    const [a] = await ended([first]);
    assert.equal(a?.status, 'no_answer');
    const retry = (await ofAssistant()).find((c) => c.id !== first);
    assert.ok(retry, 'the retry is placed with the settlement');
    await sleep(1_500);
    assert.equal((await call(retry.id)).status, 'queued', 'the retry waits its reAttemptPeriod (1 minute)');
    offsetMs += 61_000;
    const [b] = await ended([retry.id]);
    assert.equal(b?.status, 'no_answer');
    await sleep(1_500);
    assert.equal((await ofAssistant()).length, 2, 'two attempts, no more');
  });
});
