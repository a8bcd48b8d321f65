/** Calls over real HTTP: placing, reading, listing, aborting, idempotency, queue depth and call artifacts. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RecordingLinks, recordingPath } from '../../control-api/http/signed-url.ts';
import { DiskCallArtifacts, type TranscriptEntry } from '../../core/calls/artifacts.ts';
import { type CallCommand, onCallCommand } from '../../core/calls/control.ts';
import { CallLifecycle } from '../../core/calls/lifecycle.ts';
import { newId } from '../../core/ids.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import {
  type ApiResponse,
  backends,
  client,
  errorCode,
  request,
  startTestPlatform,
  type TestPlatform,
} from '../support/platform.ts';

type Api = ReturnType<typeof client>;
type Call = Record<string, unknown> & { id: string; status: string; created_at: string };
type CallList = { object: string; data: Call[]; has_more: boolean; next_cursor: string | null };

const SECRET_KEY = 'calls-suite-deployment-secret-0123456789abcdef';
const TO = '+919876543210';
const UNKNOWN_CALL = 'call_01JZZZZZZZZZZZZZZZZZZZZZZZ';

const message = (r: ApiResponse) => (r.body.error as { message: string }).message;

function expectError(r: ApiResponse, status: number, code: string, mentions?: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(errorCode(r), code, r.text);
  if (mentions !== undefined) assert.ok(message(r).includes(mentions), `"${message(r)}" names ${mentions}`);
}

/** A mono 8 kHz 16-bit WAV of `samples` samples. */
function wav(samples: number): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin(i / 4) * 8_000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8_000, 24);
  header.writeUInt32LE(16_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

for (const backend of await backends()) {
  describe(`calls (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    let agentId: string;
    let artifacts: DiskCallArtifacts;

    const createAgent = async (as: Api, name = 'Caller'): Promise<string> => {
      const r = await as('POST', '/v2/agents', { body: { name, system_prompt: 'Be brief.' } });
      assert.equal(r.status, 201, r.text);
      return r.body.id as string;
    };

    /** A workspace of its own, so what a test counts is not disturbed by the others. */
    const workspace = async (balancePaise: number) => {
      const made = await provisionWorkspace(p.platform.store, {
        name: 'Other',
        mode: 'sandbox',
        balancePaise,
      });
      const as = client(p.url, made.api_key);
      return { api: as, workspaceId: made.workspace_id, agentId: await createAgent(as) };
    };

    const place = async (as: Api, body: Record<string, unknown>, headers?: Record<string, string>) =>
      as<Call>('POST', '/v2/calls', { body, ...(headers ? { headers } : {}) });

    const placed = async (as: Api, body: Record<string, unknown>): Promise<Call> => {
      const r = await place(as, body);
      assert.equal(r.status, 202, r.text);
      return r.body;
    };

    const held = async (as: Api): Promise<number> =>
      (await as('GET', '/v2/wallet')).body.held_paise as number;

    before(async () => {
      p = await startTestPlatform(backend, {
        env: { BOOTSTRAP_BALANCE_INR: '100000', SECRET_KEY },
      });
      api = client(p.url, p.apiKey);
      agentId = await createAgent(api);
      artifacts = new DiskCallArtifacts(path.join(p.dataDir, 'recordings'));
    });
    after(() => p.close());

    test('POST /v2/calls answers 202 with the queued call object', async () => {
      const r = await place(api, { agent_id: agentId, to: TO, variables: { name: 'Asha', order: 42 } });
      assert.equal(r.status, 202, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      const call = r.body;
      assert.match(call.id, /^call_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.deepEqual(
        { ...call, id: '', created_at: '' },
        {
          id: '',
          object: 'call',
          agent_id: agentId,
          to: TO,
          status: 'queued',
          ended_reason: null,
          started_at: null,
          ended_at: null,
          duration_secs: 0,
          cost: { amount_inr: 0, per_min_inr: 3 },
          tier: 't3',
          transcript_available: false,
          recording_available: false,
          channel: 'phone',
          from: null,
          direction: 'outbound',
          max_duration_secs: 300,
          created_at: '',
          analysis: null,
          latency: null,
        },
      );
      assert.match(call.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(!r.text.includes('Asha'), 'variables are not echoed');

      const t1 = await placed(api, { agent_id: agentId, to: TO, tier: 't1', max_duration_secs: 60 });
      assert.equal(t1.tier, 't1');
      assert.deepEqual(t1.cost, { amount_inr: 0, per_min_inr: 1 });
      assert.equal(t1.max_duration_secs, 60);
      assert.equal(
        (await request(p.url, 'POST', '/v2/calls', { body: { agent_id: agentId, to: TO } })).status,
        401,
      );
    });

    test('every invalid field is 400 invalid_request naming the field', async () => {
      const base = { agent_id: agentId, to: TO };
      const manyVariables = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`v${i}`, i]));
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ to: TO }, 'agent_id'],
        [{ agent_id: 'Support', to: TO }, 'agent_id'],
        [{ agent_id: agentId }, 'to'],
        [{ ...base, to: '9876543210' }, 'to'],
        [{ ...base, to: '+0123456789' }, 'to'],
        [{ ...base, to: '+12345' }, 'to'],
        [{ ...base, channel: 'fax' }, 'channel'],
        [{ ...base, webhook_url: 'http://example.com/hook' }, 'webhook_url'],
        [{ ...base, webhook_url: 'not a url' }, 'webhook_url'],
        [{ ...base, webhook_url: `https://example.com/${'a'.repeat(2_040)}` }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://127.0.0.1/hook' }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://10.1.2.3/hook' }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://192.168.0.10:8443/hook' }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://[::1]/hook' }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://169.254.169.254/latest' }, 'webhook_url'],
        [{ ...base, webhook_url: 'https://localhost/hook' }, 'webhook_url'],
        [{ ...base, variables: manyVariables }, 'variables'],
        [{ ...base, variables: 'name=Asha' }, 'variables'],
        [{ ...base, variables: { '1st': 'x' } }, 'variables.1st'],
        [{ ...base, variables: { 'with-dash': 'x' } }, 'variables.with-dash'],
        [{ ...base, variables: { address: { city: 'Pune' } } }, 'variables.address'],
        [{ ...base, variables: { items: [1, 2] } }, 'variables.items'],
        [{ ...base, variables: { note: 'x'.repeat(513) } }, 'variables.note'],
        [{ ...base, max_duration_secs: 29 }, 'max_duration_secs'],
        [{ ...base, max_duration_secs: 1_801 }, 'max_duration_secs'],
        [{ ...base, max_duration_secs: 60.5 }, 'max_duration_secs'],
        [{ ...base, max_duration_secs: '60' }, 'max_duration_secs'],
        [{ ...base, tier: 't2' }, 'tier'],
        [{ ...base, metadata: { a: 1 } }, 'metadata'],
        [{ ...base, phone_number_id: 'pn_1', pool_id: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' }, 'pool_id'],
      ];
      const before = await held(api);
      for (const [body, field] of cases) {
        const r = await place(api, body);
        expectError(r, 400, 'invalid_request', field);
        assert.ok(message(r).startsWith(field), `${field}: "${message(r)}"`);
      }
      const longKey = await place(api, base, { 'Idempotency-Key': 'k'.repeat(256) });
      expectError(longKey, 400, 'invalid_request', 'Idempotency-Key');
      const spacedKey = await place(api, base, { 'Idempotency-Key': 'two words' });
      expectError(spacedKey, 400, 'invalid_request', 'Idempotency-Key');
      const malformed = await api('POST', '/v2/calls', {
        rawBody: '{"agent_id":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400, 'invalid_request', 'body');
      assert.equal(await held(api), before, 'refused requests hold nothing');
    });

    test('values at the limits are accepted', async () => {
      const variables: Record<string, unknown> = Object.fromEntries(
        Array.from({ length: 28 }, (_, i) => [`_v${i}`, i % 2 ? `value ${i}` : i]),
      );
      Object.assign(variables, {
        longest: 'x'.repeat(512),
        flag: true,
        nothing: null,
        [`a${'b'.repeat(63)}`]: 1.5,
      });
      assert.equal(Object.keys(variables).length, 32);
      const call = await placed(api, {
        agent_id: agentId,
        to: '+14155550123',
        channel: 'phone',
        webhook_url: `https://hooks.example.com/${'p'.repeat(2_048 - 'https://hooks.example.com/'.length)}`,
        variables,
        max_duration_secs: 1_800,
        tier: 't1',
      });
      assert.equal(call.max_duration_secs, 1_800);
      assert.equal(
        (await placed(api, { agent_id: agentId, to: TO, max_duration_secs: 30 })).max_duration_secs,
        30,
      );
    });

    test('t5, web calls, phone numbers, pools and unknown agents are refused without holding anything', async () => {
      const before = await held(api);
      expectError(await place(api, { agent_id: agentId, to: TO, tier: 't5' }), 501, 'tier_unavailable');
      expectError(
        await place(api, { agent_id: agentId, channel: 'web' }),
        501,
        'not_implemented',
        'web calls',
      );
      expectError(
        await place(api, { agent_id: agentId, to: TO, phone_number_id: 'pn_1' }),
        404,
        'not_found',
        'phone_number_id',
      );
      expectError(
        await place(api, { agent_id: agentId, to: TO, pool_id: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' }),
        404,
        'not_found',
        'pool_id',
      );
      expectError(
        await place(api, { agent_id: 'agt_01JZZZZZZZZZZZZZZZZZZZZZZZ', to: TO }),
        404,
        'not_found',
        'agent',
      );
      const other = await workspace(10_000);
      expectError(await place(api, { agent_id: other.agentId, to: TO }), 404, 'not_found', 'agent');
      assert.equal(await held(api), before);
    });

    test("GET /v2/calls/{id} reads the call; another workspace's call is 404 everywhere, like an unknown id", async () => {
      const created = await place(api, { agent_id: agentId, to: TO });
      const read = await api<Call>('GET', `/v2/calls/${created.body.id}`);
      assert.equal(read.status, 200);
      // The call object, plus the runs of its agent's tools (none here).
      assert.deepEqual(read.body, { ...created.body, tool_calls: [] });

      const other = await workspace(10_000);
      const theirs = await placed(other.api, { agent_id: other.agentId, to: TO });
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/abort'],
        ['GET', '/transcript'],
        ['GET', '/recording'],
      ] as const) {
        expectError(await api(method, `/v2/calls/${theirs.id}${suffix}`), 404, 'not_found');
        expectError(await api(method, `/v2/calls/${UNKNOWN_CALL}${suffix}`), 404, 'not_found');
      }
      expectError(await api('GET', '/v2/calls/not-an-id'), 404, 'not_found');
      assert.equal((await other.api<Call>('GET', `/v2/calls/${theirs.id}`)).body.status, 'queued');
    });

    test('GET /v2/calls is newest first, cursor-paginated, and filters by status, agent and time', async () => {
      const w = await workspace(100_000);
      const agentB = await createAgent(w.api, 'Second');
      const made: Call[] = [];
      for (const agent of [w.agentId, w.agentId, w.agentId, agentB, agentB]) {
        made.push(await placed(w.api, { agent_id: agent, to: TO, tier: 't1', max_duration_secs: 30 }));
        await sleep(3);
      }
      const aborted = made[1] as Call;
      assert.equal((await w.api('POST', `/v2/calls/${aborted.id}/abort`)).status, 200);
      const newestFirst = made.map((c) => c.id).reverse();

      const ids = async (query: string): Promise<string[]> => {
        const r = await w.api<CallList>('GET', `/v2/calls${query}`);
        assert.equal(r.status, 200, r.text);
        return r.body.data.map((c) => c.id);
      };

      const first = await w.api<CallList>('GET', '/v2/calls?limit=2');
      assert.equal(first.body.object, 'list');
      assert.deepEqual(
        first.body.data.map((c) => c.id),
        newestFirst.slice(0, 2),
      );
      assert.equal(first.body.has_more, true);
      assert.ok(first.body.next_cursor);
      const second = await w.api<CallList>('GET', `/v2/calls?limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual(
        second.body.data.map((c) => c.id),
        newestFirst.slice(2, 4),
      );
      const last = await w.api<CallList>('GET', `/v2/calls?limit=2&starting_after=${newestFirst[3]}`);
      assert.deepEqual(
        last.body.data.map((c) => c.id),
        newestFirst.slice(4),
      );
      assert.equal(last.body.has_more, false);
      assert.equal(last.body.next_cursor, null);
      assert.deepEqual(await ids(''), newestFirst);

      assert.deepEqual(await ids('?status=aborted'), [aborted.id]);
      assert.deepEqual(
        await ids('?status=queued'),
        newestFirst.filter((id) => id !== aborted.id),
      );
      assert.deepEqual(await ids('?status=queued,aborted'), newestFirst);
      assert.deepEqual(await ids('?status=completed,failed'), []);
      assert.deepEqual(await ids(`?agent_id=${agentB}`), newestFirst.slice(0, 2));
      assert.deepEqual(await ids(`?agent_id=${agentB}&status=aborted`), []);
      const middle = (made[2] as Call).created_at;
      assert.deepEqual(await ids(`?created_after=${middle}`), newestFirst.slice(0, 3));
      assert.deepEqual(await ids(`?created_before=${middle}`), newestFirst.slice(3));
      assert.deepEqual(
        await ids(
          `?created_after=${(made[1] as Call).created_at}&created_before=${(made[3] as Call).created_at}`,
        ),
        [made[2]?.id, made[1]?.id],
      );
      // The same instant written in IST.
      const inIst = new Date(Date.parse(middle) + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');
      assert.deepEqual(await ids(`?created_after=${encodeURIComponent(inIst)}`), newestFirst.slice(0, 3));

      expectError(await w.api('GET', '/v2/calls?status=ringing'), 400, 'invalid_request', 'status');
      expectError(await w.api('GET', '/v2/calls?status=queued,bogus'), 400, 'invalid_request', 'status');
      expectError(
        await w.api('GET', '/v2/calls?created_after=yesterday'),
        400,
        'invalid_request',
        'created_after',
      );
      expectError(
        await w.api('GET', '/v2/calls?created_before=2026-13-01'),
        400,
        'invalid_request',
        'created_before',
      );
      expectError(await w.api('GET', '/v2/calls?limit=0'), 400, 'invalid_request', 'limit');
      expectError(await w.api('GET', '/v2/calls?agent_id=Support'), 400, 'invalid_request', 'agent_id');
      expectError(await w.api('GET', '/v2/calls?sort=asc'), 400, 'invalid_request', 'sort');
      expectError(await w.api('GET', '/v2/calls?cursor=nonsense'), 400, 'invalid_request', 'cursor');
    });

    test('abort: a queued call ends aborted-by-api, free, its hold released; again is 409 conflict', async () => {
      const before = await api('GET', '/v2/wallet');
      const call = await placed(api, { agent_id: agentId, to: TO, tier: 't1', max_duration_secs: 60 });
      assert.equal(await held(api), (before.body.held_paise as number) + 100);

      const r = await api<Call>('POST', `/v2/calls/${call.id}/abort`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.id, call.id);
      assert.equal(r.body.status, 'aborted');
      assert.equal(r.body.ended_reason, 'aborted-by-api');
      assert.deepEqual(r.body.cost, { amount_inr: 0, per_min_inr: 1 });
      assert.equal(r.body.duration_secs, 0);
      assert.equal(r.body.started_at, null);
      assert.match(String(r.body.ended_at), /Z$/);
      const afterAbort = await api('GET', '/v2/wallet');
      assert.equal(afterAbort.body.held_paise, before.body.held_paise);
      assert.equal(afterAbort.body.balance_paise, before.body.balance_paise);
      assert.deepEqual((await api<Call>('GET', `/v2/calls/${call.id}`)).body, { ...r.body, tool_calls: [] });

      expectError(await api('POST', `/v2/calls/${call.id}/abort`), 409, 'conflict', 'aborted');
      expectError(await api('POST', `/v2/calls/${UNKNOWN_CALL}/abort`), 404, 'not_found');
      const withBody = await placed(api, { agent_id: agentId, to: TO });
      assert.equal((await api('POST', `/v2/calls/${withBody.id}/abort`, { body: {} })).status, 200);
      expectError(
        await api('POST', `/v2/calls/${withBody.id}/abort`, { body: { reason: 'x' } }),
        400,
        'invalid_request',
        'reason',
      );
      // Many HTTP clients send a JSON Content-Type on every request, body or not.
      const emptyJson = await placed(api, { agent_id: agentId, to: TO });
      const aborted = await api<Call>('POST', `/v2/calls/${emptyJson.id}/abort`, {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(aborted.status, 200, aborted.text);
      assert.equal(aborted.body.status, 'aborted');
    });

    test('abort of a ringing call tells the node hosting it to hang up', async () => {
      const call = await placed(api, { agent_id: agentId, to: TO });
      const lifecycle = new CallLifecycle({ store: p.platform.store });
      await lifecycle.markDialing(p.workspaceId, call.id, { carrier: 'sandbox', carrierCallId: 'SB-42' });
      const commands: CallCommand[] = [];
      const unsubscribe = await onCallCommand(p.platform.coord, (command) => commands.push(command));
      try {
        const r = await api<Call>('POST', `/v2/calls/${call.id}/abort`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.status, 'aborted');
        for (let i = 0; i < 100 && commands.length === 0; i++) await sleep(10);
        assert.deepEqual(commands, [
          {
            type: 'hangup',
            workspaceId: p.workspaceId,
            callId: call.id,
            carrier: 'sandbox',
            carrierCallId: 'SB-42',
          },
        ]);
      } finally {
        await unsubscribe();
      }
    });

    test('Idempotency-Key: a repeat replays the stored response byte for byte and places nothing', async () => {
      const w = await workspace(100_000);
      const body = { agent_id: w.agentId, to: TO, variables: { b: 2, a: 1 } };
      const key = { 'Idempotency-Key': 'order-1001:attempt' };
      const first = await place(w.api, body, key);
      assert.equal(first.status, 202, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const heldAfterFirst = await held(w.api);
      const again = await place(w.api, { to: TO, variables: { a: 1, b: 2 }, agent_id: w.agentId }, key);
      assert.equal(again.status, 202);
      assert.equal(again.text, first.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(await held(w.api), heldAfterFirst);

      const different = await place(w.api, { ...body, to: '+919876543211' }, key);
      expectError(different, 400, 'invalid_request', 'Idempotency-Key');
      assert.match(message(different), /reused with a different request/);

      const otherWorkspace = await workspace(100_000);
      const sameKeyElsewhere = await place(
        otherWorkspace.api,
        { agent_id: otherWorkspace.agentId, to: TO },
        key,
      );
      assert.equal(sameKeyElsewhere.status, 202, 'keys are per workspace');

      const list = await w.api<CallList>('GET', '/v2/calls');
      assert.deepEqual(
        list.body.data.map((c) => c.id),
        [first.body.id],
      );
    });

    test('Idempotency-Key: concurrent requests with one key place exactly one call', async () => {
      const w = await workspace(100_000);
      const body = { agent_id: w.agentId, to: TO };
      const key = { 'Idempotency-Key': 'concurrent-1' };
      const responses = await Promise.all(Array.from({ length: 8 }, () => place(w.api, body, key)));
      const accepted = responses.filter((r) => r.status === 202);
      const duplicates = responses.filter((r) => r.status === 409);
      assert.equal(
        accepted.length + duplicates.length,
        responses.length,
        responses.map((r) => r.text).join('\n'),
      );
      assert.ok(accepted.length >= 1);
      for (const r of duplicates) expectError(r, 409, 'duplicate_call');
      assert.equal(new Set(accepted.map((r) => r.text)).size, 1, 'every 202 is the same response');
      const list = await w.api<CallList>('GET', '/v2/calls');
      assert.deepEqual(
        list.body.data.map((c) => c.id),
        [accepted[0]?.body.id],
      );
      const later = await place(w.api, body, key);
      assert.equal(later.status, 202);
      assert.equal(later.text, accepted[0]?.text);
    });

    test('Idempotency-Key: a 402 can be retried with the same key after a top-up', async () => {
      const w = await workspace(100);
      const body = { agent_id: w.agentId, to: TO, max_duration_secs: 1_800 };
      const key = { 'Idempotency-Key': 'after-top-up' };
      expectError(await place(w.api, body, key), 402, 'insufficient_balance');
      expectError(await place(w.api, body, key), 402, 'insufficient_balance');
      assert.equal(await held(w.api), 0);
      await p.platform.store.wallet.credit(w.workspaceId, {
        amountPaise: 20_000,
        reference: newId('transaction'),
        kind: 'topup',
        description: 'top-up',
      });
      const retried = await place(w.api, body, key);
      assert.equal(retried.status, 202, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
      assert.equal(await held(w.api), 9_000);
      const replayed = await place(w.api, body, key);
      assert.equal(replayed.text, retried.text);
    });

    test('queue depth: with 500 calls accepted and not ended, the next is 429 rate_limited with Retry-After', async () => {
      const w = await workspace(100_000);
      const body = { agent_id: w.agentId, to: TO, tier: 't1', max_duration_secs: 30 };
      const ids: string[] = [];
      for (let batch = 0; batch < 20; batch++) {
        const responses = await Promise.all(Array.from({ length: 25 }, () => place(w.api, body)));
        for (const r of responses) {
          assert.equal(r.status, 202, r.text);
          ids.push(r.body.id);
        }
      }
      assert.equal(new Set(ids).size, 500);
      const full = await place(w.api, body);
      expectError(full, 429, 'rate_limited', 'queue');
      assert.equal(full.headers.get('retry-after'), '30');
      assert.equal(await held(w.api), 500 * 50);

      assert.equal((await w.api('POST', `/v2/calls/${ids[0]}/abort`)).status, 200);
      assert.equal((await place(w.api, body)).status, 202, 'an ended call frees a place');
      expectError(await place(w.api, body), 429, 'rate_limited');
    });

    test('GET /v2/calls/{id}/transcript returns the saved turns; none saved is 404', async () => {
      const call = await placed(api, { agent_id: agentId, to: TO });
      expectError(await api('GET', `/v2/calls/${call.id}/transcript`), 404, 'not_found', 'transcript');
      const turns: TranscriptEntry[] = [
        {
          speaker: 'agent',
          text: 'Namaste, this is Asha.',
          start_ms: 0,
          end_ms: 1_800,
          interrupted: false,
          node: 'start',
        },
        { speaker: 'caller', text: 'Hello?', start_ms: 2_100, end_ms: 2_600, interrupted: false },
        { speaker: 'agent', text: 'I am calling about', start_ms: 2_900, end_ms: 3_700, interrupted: true },
      ];
      await artifacts.saveTranscript(p.workspaceId, call.id, turns);
      assert.equal(
        await p.platform.store.calls.setArtifacts(p.workspaceId, call.id, { transcriptAvailable: true }),
        true,
      );
      const r = await api('GET', `/v2/calls/${call.id}/transcript`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { object: 'transcript', call_id: call.id, turns });
      assert.equal((await api<Call>('GET', `/v2/calls/${call.id}`)).body.transcript_available, true);
    });

    test('GET /v2/calls/{id}/recording redirects to a signed 15-minute link that serves the WAV', async () => {
      const call = await placed(api, { agent_id: agentId, to: TO });
      expectError(await api('GET', `/v2/calls/${call.id}/recording`), 404, 'not_found', 'recording');
      const bytes = wav(800);
      await artifacts.saveRecording(p.workspaceId, call.id, bytes);
      await p.platform.store.calls.setArtifacts(p.workspaceId, call.id, { recordingAvailable: true });

      const redirect = await fetch(`${p.url}/v2/calls/${call.id}/recording`, {
        headers: { authorization: `Bearer ${p.apiKey}` },
        redirect: 'manual',
      });
      assert.equal(redirect.status, 302);
      const location = new URL(redirect.headers.get('location') ?? '');
      assert.equal(location.origin, p.url);
      assert.equal(location.pathname, `/recordings/${p.workspaceId}/${call.id}.wav`);
      const expires = Number(location.searchParams.get('expires'));
      const remaining = expires - Date.now() / 1_000;
      assert.ok(remaining > 14 * 60 && remaining <= 15 * 60 + 1, `expires in ${remaining}s`);
      assert.match(location.searchParams.get('signature') ?? '', /^[0-9a-f]{64}$/);

      const download = await fetch(location);
      assert.equal(download.status, 200);
      assert.equal(download.headers.get('content-type'), 'audio/wav');
      assert.equal(download.headers.get('content-length'), String(bytes.length));
      assert.deepEqual(Buffer.from(await download.arrayBuffer()), bytes);

      const followed = await fetch(`${p.url}/v2/calls/${call.id}/recording`, {
        headers: { authorization: `Bearer ${p.apiKey}` },
      });
      assert.equal(followed.status, 200);
      assert.deepEqual(Buffer.from(await followed.arrayBuffer()), bytes);

      const signature = location.searchParams.get('signature') ?? '';
      const tampered = new URL(location);
      tampered.searchParams.set('signature', `${signature[0] === 'a' ? 'b' : 'a'}${signature.slice(1)}`);
      const refusal = await request(p.url, 'GET', `${tampered.pathname}${tampered.search}`);
      expectError(refusal, 404, 'not_found', 'invalid or has expired');
      const longer = new URL(location);
      longer.searchParams.set('expires', String(expires + 3_600));
      expectError(await request(p.url, 'GET', `${longer.pathname}${longer.search}`), 404, 'not_found');
      const otherCall = location.pathname.replace(call.id, UNKNOWN_CALL);
      expectError(await request(p.url, 'GET', `${otherCall}${location.search}`), 404, 'not_found');

      const links = new RecordingLinks(SECRET_KEY);
      const past = Math.floor(Date.now() / 1_000) - 1;
      const link = { workspaceId: p.workspaceId, callId: call.id, expires: past };
      const expired = await request(p.url, 'GET', recordingPath(link, links.sign(link)));
      expectError(expired, 404, 'not_found', 'invalid or has expired');

      const unknown = { workspaceId: p.workspaceId, callId: UNKNOWN_CALL, expires: past + 900 };
      const noSuchCall = await request(p.url, 'GET', recordingPath(unknown, links.sign(unknown)));
      expectError(noSuchCall, 404, 'not_found', 'invalid or has expired');
      assert.equal(message(noSuchCall), message(expired), 'a link never tells whether the call exists');
    });

    test('PUBLIC_API_URL sets the base of recording links; ALLOW_PRIVATE_WEBHOOKS admits internal webhook hosts', async () => {
      const behindProxy = await startTestPlatform(backend, {
        env: { PUBLIC_API_URL: 'https://api.example.com/', ALLOW_PRIVATE_WEBHOOKS: 'true', SECRET_KEY },
      });
      try {
        const as = client(behindProxy.url, behindProxy.apiKey);
        const call = await placed(as, {
          agent_id: await createAgent(as),
          to: TO,
          webhook_url: 'https://127.0.0.1:8443/hook',
        });
        const disk = new DiskCallArtifacts(path.join(behindProxy.dataDir, 'recordings'));
        await disk.saveRecording(behindProxy.workspaceId, call.id, wav(10));
        const redirect = await fetch(`${behindProxy.url}/v2/calls/${call.id}/recording`, {
          headers: { authorization: `Bearer ${behindProxy.apiKey}` },
          redirect: 'manual',
        });
        assert.equal(redirect.status, 302);
        assert.match(
          redirect.headers.get('location') ?? '',
          new RegExp(
            `^https://api\\.example\\.com/recordings/${behindProxy.workspaceId}/${call.id}\\.wav\\?expires=\\d+&signature=[0-9a-f]{64}$`,
          ),
        );
      } finally {
        await behindProxy.close();
      }
    });

    test('the OpenAPI document lists the call routes, the download link and duplicate_call', async () => {
      const doc = (await request(p.url, 'GET', '/openapi.json')).body as {
        paths: Record<
          string,
          Record<string, { security?: unknown[]; responses: Record<string, { 'x-error-codes'?: string[] }> }>
        >;
      };
      const operations = Object.entries(doc.paths).flatMap(([route, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${route}`),
      );
      for (const expected of [
        'POST /v2/calls',
        'GET /v2/calls',
        'GET /v2/calls/{id}',
        'POST /v2/calls/{id}/abort',
        'GET /v2/calls/{id}/transcript',
        'GET /v2/calls/{id}/recording',
        'GET /recordings/{workspace_id}/{call_id}.wav',
      ]) {
        assert.ok(operations.includes(expected), `missing ${expected}`);
      }
      assert.ok(!operations.includes('POST /v2/calls/*'), 'calls are no longer listed as not live');
      const create = doc.paths['/v2/calls']?.post;
      const codes = Object.values(create?.responses ?? {}).flatMap((r) => r['x-error-codes'] ?? []);
      for (const code of [
        'duplicate_call',
        'insufficient_balance',
        'tier_unavailable',
        'rate_limited',
        'invalid_request',
      ]) {
        assert.ok(codes.includes(code), `POST /v2/calls documents ${code}`);
      }
      assert.ok(create?.responses['202']);
      assert.ok(doc.paths['/v2/calls/{id}/recording']?.get?.responses['302']);
      assert.deepEqual(doc.paths['/recordings/{workspace_id}/{call_id}.wav']?.get?.security, []);
    });
  });
}
