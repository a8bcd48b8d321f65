/**
 * A gateway node's admission limit, black box: the whole platform in one process with `GATEWAY_MAX_CALLS=1`,
 * sandbox callees that answer and hang up after 2 s. The dialer holds a second call in `queued` while the node
 * is full and dials it once the first ends (never two live at once); and when the fleet claims more room than
 * this node has (another gateway that the balancer does not send streams to), the stream that reaches the full
 * node is refused: its call ends `failed` with `gateway-at-capacity`, unbilled. A browser that joins its web call
 * while the call waits queued for room waits with it, and is answered once room frees.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebCaller } from '../../bench/conversation/web-caller.ts';
import { GatewayFleet } from '../../core/calls/fleet.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  cost: { amount_inr: number };
}

const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);
const LIVE = new Set(['dialing', 'in_progress']);
/** `4`: the callee answers and hangs up after 2 s. */
const HANGS_UP = '+919000000004';
/** `3`: the callee answers and stays silent until the call is ended. */
const SILENT = '+919000000003';

const [embedded] = await backends();

describe('a gateway node at its call limit', {
  skip: !SphinxTranscriber.available() && 'PocketSphinx is not installed',
}, () => {
  let platform: TestPlatform;
  let api: ReturnType<typeof client>;
  let agentId: string;

  before(async () => {
    platform = await startTestPlatform(embedded!, {
      env: { ROLES: 'api,gateway,worker', GATEWAY_MAX_CALLS: '1', SANDBOX_ANSWER_DELAY_MS: '100' },
    });
    const workspace = await provisionWorkspace(platform.platform.store, {
      name: 'Capacity',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    api = client(platform.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha.',
        first_message: 'Hello, this is Asha.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 30,
        behavior: { silence_reprompt_secs: 0 },
      },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
  });

  after(async () => {
    await platform?.close();
  });

  async function place(to = HANGS_UP): Promise<string> {
    const response = await api<CallBody>('POST', '/v2/calls', { body: { to, agent_id: agentId } });
    assert.equal(response.status, 202, response.text);
    return response.body.id;
  }

  async function get(id: string): Promise<CallBody> {
    return (await api<CallBody>('GET', `/v2/calls/${id}`)).body;
  }

  test('the dialer holds the second call queued until the first ends, then dials it', async () => {
    const first = await place();
    const second = await place();
    const deadline = Date.now() + 20_000;
    let sawHeld = false;
    let ended: CallBody[] = [];
    for (;;) {
      const calls = await Promise.all([get(first), get(second)]);
      const live = calls.filter((call) => LIVE.has(call.status)).length;
      assert.ok(live <= 1, `never two live calls on a node that takes one: ${JSON.stringify(calls)}`);
      if (calls[0]!.status === 'in_progress' && calls[1]!.status === 'queued') sawHeld = true;
      if (calls.every((call) => TERMINAL.has(call.status))) {
        ended = calls;
        break;
      }
      assert.ok(Date.now() < deadline, `calls did not end: ${JSON.stringify(calls)}`);
      await sleep(50);
    }
    assert.ok(sawHeld, 'the second call waited in queued while the first was live');
    assert.deepEqual(
      ended.map((call) => call.status),
      ['completed', 'completed'],
    );
  });

  test('a stream beyond the limit is refused: its call ends failed, gateway-at-capacity, free', async () => {
    // Another gateway claims room for four more calls, but every stream still reaches this node.
    const leave = await new GatewayFleet(platform.platform.coord).join('elsewhere', undefined, {
      capacity: () => 4,
    });
    try {
      // Silent callees stay on the line: the second stream waits its 2 s for room, then is refused.
      const ids = [await place(SILENT), await place(SILENT)];
      const deadline = Date.now() + 20_000;
      let calls: CallBody[] = [];
      for (;;) {
        calls = await Promise.all(ids.map(get));
        if (calls.some((call) => TERMINAL.has(call.status))) break;
        assert.ok(Date.now() < deadline, `no call ended: ${JSON.stringify(calls)}`);
        await sleep(50);
      }
      const served = calls.filter((call) => call.status === 'in_progress');
      assert.equal(served.length, 1, JSON.stringify(calls));
      const aborted = await api('POST', `/v2/calls/${served[0]!.id}/abort`);
      assert.equal(aborted.status, 200, aborted.text);
      const refused = calls.filter((call) => call.ended_reason === 'gateway-at-capacity');
      assert.equal(refused.length, 1, JSON.stringify(calls));
      assert.equal(refused[0]!.status, 'failed');
      assert.equal(refused[0]!.cost.amount_inr, 0);
    } finally {
      await leave();
    }
  });

  test('a browser joining its queued web call waits for room, then is answered', async () => {
    const phone = await place(SILENT);
    const until = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 20_000;
      while (!(await check())) {
        assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
        await sleep(50);
      }
    };
    await until('the phone call is live', async () => (await get(phone)).status === 'in_progress');
    const created = await api<CallBody & { web: { url: string } }>('POST', '/v2/calls', {
      body: { channel: 'web', agent_id: agentId },
    });
    assert.equal(created.status, 202, created.text);
    const web = created.body.id;
    const joining = WebCaller.join(created.body.web.url, 20_000);
    joining.catch(() => {});
    await sleep(1_500);
    assert.equal((await get(web)).status, 'queued', 'held while the node is full, not refused');
    const aborted = await api('POST', `/v2/calls/${phone}/abort`);
    assert.equal(aborted.status, 200, aborted.text);
    const caller = await joining;
    try {
      await until('the web call is answered', async () => {
        const now = await get(web);
        if (TERMINAL.has(now.status)) assert.fail(JSON.stringify(now));
        return now.status === 'in_progress';
      });
    } finally {
      await caller.hangUp();
    }
    await until('the web call ends', async () => TERMINAL.has((await get(web)).status));
    assert.notEqual((await get(web)).ended_reason, 'gateway-at-capacity');
  });
});
