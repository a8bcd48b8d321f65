/**
 * Numbers imported from a customer's Twilio account and their incoming calls, black box over real HTTP against
 * the fake Twilio REST server: import (a number of the account, an unknown one, refused credentials), incoming
 * calls on and off with versions and a stale version's 409, a provider failure making the number `error`, and
 * a delete putting the number's old VoiceUrl back. Then Twilio's signed incoming-call webhook: `<Connect>
 * <Stream>` to the gateway whose one-time token carries the caller's media into an inbound call; a bad
 * signature refused with 403 and nothing created; `<Reject/>` for a number without an agent and for a wallet
 * that cannot cover the agent's longest call; the busy message over the workspace's live-call ceiling.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { LIVE_CALLS_PER_WORKSPACE } from '../../core/calls/live-slots.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SILENCE_FRAME } from '../../gateway/carriers/sandbox/callee-audio.ts';
import { TwilioMediaStream } from '../../gateway/carriers/sandbox/media-stream.ts';
import { FakeTwilioRestServer } from '../../gateway/carriers/twilio/testing/fake-rest-server.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Api = ReturnType<typeof client>;
interface NumberBody {
  id: string;
  number: string;
  ownership: string;
  provider: string;
  state: string;
  setup_error: string | null;
  incoming_enabled: boolean;
  version: number;
}
interface CallBody {
  id: string;
  status: string;
  direction: string;
  from: string | null;
  to: string | null;
  phone_number_id?: string;
  ended_reason: string | null;
}

const CALLER = '+919812300002';
const OLD_VOICE_URL = 'https://old.example.com/voice';

// SQLite with the in-process coordinator, and PostgreSQL with Redis where both are configured.
for (const backend of (await backends()).filter((b) => !b.databaseUrl || b.redisUrl)) {
  describe(`imported Twilio numbers and their incoming calls (${backend.name})`, () => {
    let fake: FakeTwilioRestServer;
    let p: TestPlatform;
    let api: Api;
    let agentId: string;
    let numberCount = 0;

    before(async () => {
      fake = await FakeTwilioRestServer.start();
      p = await startTestPlatform(backend, {
        env: { ROLES: 'api,gateway', TWILIO_API_BASE: fake.url },
      });
      api = await workspace(1_000_000);
      agentId = await agentOf(api, 120);
    });
    after(async () => {
      await p?.close();
      await fake?.close();
    });

    async function workspace(balancePaise: number): Promise<Api> {
      const ws = await provisionWorkspace(p.platform.store, { name: 'tw', mode: 'sandbox', balancePaise });
      return client(p.url, ws.api_key);
    }

    async function agentOf(a: Api, maxDurationSecs: number): Promise<string> {
      const agent = await a<{ id: string }>('POST', '/v2/agents', {
        body: { name: 'Desk', first_message: 'Hello', max_duration_secs: maxDurationSecs },
      });
      assert.equal(agent.status, 201, agent.text);
      return agent.body.id;
    }

    /** A new number on the fake account, imported into `a`'s workspace. */
    async function imported(a: Api = api): Promise<{ body: NumberBody; sid: string }> {
      numberCount++;
      const phone = `+9180455500${String(numberCount).padStart(2, '0')}`;
      const { sid } = fake.addIncomingNumber(phone, OLD_VOICE_URL);
      const r = await a<NumberBody>('POST', '/v2/phone-numbers/import', {
        body: { number: phone, provider: 'twilio', account_sid: fake.accountSid, auth_token: fake.authToken },
      });
      assert.equal(r.status, 201, r.text);
      return { body: r.body, sid };
    }

    /** Assigns the agent and turns incoming calls on. */
    async function answering(a: Api, number: NumberBody, agent: string): Promise<NumberBody> {
      const assigned = await a<NumberBody>('PATCH', `/v2/phone-numbers/${number.id}`, {
        body: { agent_id: agent, version: number.version },
      });
      const on = await a<NumberBody>('POST', `/v2/phone-numbers/${number.id}/incoming`, {
        body: { enabled: true, version: assigned.body.version },
      });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.state, 'ready', on.text);
      return on.body;
    }

    const ring = (
      sid: string,
      numberId: string,
      options: { signature?: string | null; authToken?: string } = {},
    ) => fake.ringIncoming(sid, CALLER, { url: `${p.url}/carriers/twilio/voice/${numberId}`, ...options });

    test('import: a number of the account, an unknown number, refused credentials, a duplicate', async () => {
      const { body, sid } = await imported();
      assert.equal(body.ownership, 'customer');
      assert.equal(body.provider, 'twilio');
      assert.equal(body.state, 'imported');
      assert.equal(body.incoming_enabled, false);
      const stored = await p.platform.store.phoneNumbers.findById(body.id);
      assert.ok(stored?.providerSecret && !stored.providerSecret.includes(fake.authToken), 'sealed');
      assert.equal(stored?.providerRef, sid);

      const form = { provider: 'twilio', account_sid: fake.accountSid, auth_token: fake.authToken };
      const unknown = await api('POST', '/v2/phone-numbers/import', {
        body: { ...form, number: '+918045559999' },
      });
      assert.equal(unknown.status, 400, unknown.text);
      assert.match(unknown.text, /is not a number of Twilio account/);
      const refused = await api('POST', '/v2/phone-numbers/import', {
        body: { ...form, number: body.number, auth_token: 'wrong-token' },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /auth_token/);
      assert.ok(!refused.text.includes('wrong-token'), 'the token is never echoed');
      const twice = await api('POST', '/v2/phone-numbers/import', { body: { ...form, number: body.number } });
      assert.equal(twice.status, 409, twice.text);
      const foreign = await api('POST', '/v2/phone-numbers/import', {
        body: { ...form, number: '+14155550100' },
      });
      assert.equal(foreign.status, 400, foreign.text);

      const other = await workspace(0);
      assert.equal((await other('GET', `/v2/phone-numbers/${body.id}`)).status, 404);
      const hidden = await other('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: true, version: 1 },
      });
      assert.equal(hidden.status, 404, hidden.text);
    });

    test('incoming on and off: versions, a stale 409, a provider failure, delete restores the VoiceUrl', async () => {
      const { body, sid } = await imported();
      const assigned = await api<NumberBody>('PATCH', `/v2/phone-numbers/${body.id}`, {
        body: { agent_id: agentId, version: body.version },
      });
      assert.equal(assigned.body.version, body.version + 1);
      const stale = await api('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: true, version: body.version },
      });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(errorCode(stale), 'conflict');

      const on = await api<NumberBody>('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: true, version: assigned.body.version },
      });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.state, 'ready');
      assert.equal(on.body.version, assigned.body.version + 1);
      const atTwilio = fake.incomingNumbers.get(sid);
      assert.equal(atTwilio?.voiceUrl, `http://localhost/carriers/twilio/voice/${body.id}`);
      assert.equal(atTwilio?.statusCallback, `http://localhost/carriers/twilio/voice/${body.id}/status`);

      const off = await api<NumberBody>('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: false, version: on.body.version },
      });
      assert.equal(off.body.state, 'imported');
      assert.equal(fake.incomingNumbers.get(sid)?.voiceUrl, OLD_VOICE_URL);

      fake.answerNext({ kind: 'error', status: 400, code: 21502, message: 'VoiceUrl is not valid' });
      const failed = await api<NumberBody>('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: true, version: off.body.version },
      });
      assert.equal(failed.status, 200, failed.text);
      assert.equal(failed.body.state, 'error');
      assert.match(failed.body.setup_error ?? '', /VoiceUrl is not valid/);
      assert.equal(failed.body.incoming_enabled, false);

      const again = await api<NumberBody>('POST', `/v2/phone-numbers/${body.id}/incoming`, {
        body: { enabled: true, version: failed.body.version },
      });
      assert.equal(again.body.state, 'ready');
      assert.equal((await api('DELETE', `/v2/phone-numbers/${body.id}`)).status, 200);
      assert.equal(fake.incomingNumbers.get(sid)?.voiceUrl, OLD_VOICE_URL, 'the old address is back');
      assert.equal((await api('GET', `/v2/phone-numbers/${body.id}`)).status, 404);
    });

    test('a signed incoming call connects its media stream to the gateway: an inbound call', async () => {
      const { body, sid } = await imported();
      const number = await answering(api, body, agentId);

      const forged = await ring(sid, number.id, { signature: 'bm90IGEgc2lnbmF0dXJl' });
      assert.equal(forged.status, 403, forged.body);
      const wrongKey = await ring(sid, number.id, { authToken: 'another-token' });
      assert.equal(wrongKey.status, 403, wrongKey.body);
      const none = await api<{ data: CallBody[] }>('GET', '/v2/calls');
      assert.equal(none.body.data.filter((c) => c.phone_number_id === number.id).length, 0);

      const answer = await ring(sid, number.id);
      assert.equal(answer.status, 200, answer.body);
      const stream =
        /<Connect><Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/><\/Stream><\/Connect>/.exec(
          answer.body,
        );
      assert.ok(stream, answer.body);
      const [, mediaUrl = '', token = ''] = stream;
      assert.match(mediaUrl, /^ws:\/\/.+\/media\/twilio$/);

      const calls = await api<{ data: CallBody[] }>('GET', '/v2/calls');
      const call = calls.body.data.find((c) => c.phone_number_id === number.id);
      assert.ok(call);
      assert.equal(call.direction, 'inbound');
      assert.equal(call.status, 'dialing');
      assert.equal(call.from, CALLER);
      assert.equal(call.to, number.number);

      let closed = false;
      const media = new TwilioMediaStream(
        { url: mediaUrl, accountSid: fake.accountSid, callSid: answer.callSid, streamSid: 'MZ1', token },
        { nextFrame: () => SILENCE_FRAME, heard: () => {}, closed: () => (closed = true) },
        pino({ level: 'silent' }),
      );
      await until(call.id, (c) => c.status === 'in_progress');
      await media.stop();
      const ended = await until(call.id, (c) => c.status === 'completed');
      assert.equal(ended.ended_reason, 'customer-ended-call');
      assert.ok(closed);

      // The same token again: good once.
      const unanswered = await ring(sid, number.id);
      const callSid = unanswered.callSid;
      const second = (await api<{ data: CallBody[] }>('GET', '/v2/calls')).body.data.find(
        (c) => c.phone_number_id === number.id && c.status === 'dialing',
      );
      assert.ok(second);
      // The caller hangs up before the stream connects: Twilio's status callback ends the call, free.
      const status = await fake.postSigned(`${p.url}/carriers/twilio/voice/${number.id}/status`, {
        AccountSid: fake.accountSid,
        CallSid: callSid,
        CallStatus: 'completed',
        CallDuration: '0',
      });
      assert.equal(status.status, 204, status.body);
      assert.equal((await until(second.id, (c) => c.status === 'failed')).ended_reason, 'pipeline-error');
    });

    test('<Reject/> without an agent or with a wallet too low; the busy message over the ceiling', async () => {
      const { body, sid } = await imported();
      const number = await answering(api, body, agentId);
      await api('PATCH', `/v2/phone-numbers/${number.id}`, {
        body: { agent_id: null, version: number.version },
      });
      const noAgent = await ring(sid, number.id);
      assert.equal(noAgent.status, 200);
      assert.match(noAgent.body, /<Response><Reject\/><\/Response>/);

      // ₹90 (1,800 s at ₹3 a minute) is more than this wallet holds.
      const poor = await workspace(5_000);
      const poorNumber = await imported(poor);
      const poorAgent = await agentOf(poor, 1_800);
      await answering(poor, poorNumber.body, poorAgent);
      const low = await ring(poorNumber.sid, poorNumber.body.id);
      assert.match(low.body, /<Response><Reject\/><\/Response>/);
      assert.equal((await poor<{ data: unknown[] }>('GET', '/v2/calls')).body.data.length, 0);

      const busyApi = await workspace(1_000_000);
      const busyNumber = await imported(busyApi);
      await answering(busyApi, busyNumber.body, await agentOf(busyApi, 60));
      for (let i = 0; i < LIVE_CALLS_PER_WORKSPACE; i++) {
        assert.match((await ring(busyNumber.sid, busyNumber.body.id)).body, /<Connect>/);
      }
      const busy = await ring(busyNumber.sid, busyNumber.body.id);
      assert.match(busy.body, /<Say>[^<]*busy[^<]*<\/Say><Hangup\/>/);
      const live = (await busyApi<{ data: CallBody[] }>('GET', '/v2/calls')).body.data;
      assert.equal(live.length, LIVE_CALLS_PER_WORKSPACE, 'the busy caller made no call');
    });

    async function until(id: string, done: (call: CallBody) => boolean): Promise<CallBody> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
        if (done(body)) return body;
        if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}`);
        await sleep(100);
      }
    }
  });
}
