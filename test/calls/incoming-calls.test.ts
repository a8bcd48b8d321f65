/**
 * Incoming calls on the sandbox provider, black box: the whole platform in one process rents a number, gives it
 * an agent with a `webhook_url`, turns its incoming calls on and rings it with `simulate-incoming`. A simulated
 * caller connects over the Twilio media protocol and converses; the call (`direction: "inbound"`) completes with
 * a transcript, a charge, and its `call.*` webhooks at the agent's `webhook_url`. Also: a production workspace
 * cannot simulate, another workspace's number is 404, a number with incoming calls off is a 409, and a wallet
 * that cannot cover the agent's longest call is a 402.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Api = ReturnType<typeof client>;
interface CallBody {
  id: string;
  status: string;
  direction: string;
  from: string | null;
  to: string | null;
  phone_number_id?: string;
  ended_reason: string | null;
  duration_secs: number;
  cost: { amount_inr: number };
  transcript_available: boolean;
}
interface NumberBody {
  id: string;
  number: string;
  version: number;
  state: string;
}

const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);
const CALLER = '+919812300001';
const DOCUMENTS = {
  business: { name: 'Acme Retail Pvt Ltd', registration_number: 'U52100MH2020PTC123456' },
  address: { line1: '12 MG Road', city: 'Bengaluru', state: 'Karnataka', postal_code: '560001' },
  documents: [{ type: 'business_registration', url: 'https://docs.example.com/coi.pdf' }],
};

/** Rents a sandbox number of area 80 that answers incoming setup (not ending in 5). */
async function rentNumber(api: Api, skip = 0): Promise<NumberBody> {
  const latest = (await api('GET', '/v2/telephony/requirements')).body.submission as {
    status: string;
  } | null;
  if (latest?.status !== 'approved') {
    assert.equal((await api('POST', '/v2/telephony/submit', { body: DOCUMENTS })).status, 201);
    assert.equal((await api('POST', '/v2/telephony/refresh')).body.status, 'approved');
  }
  const found = (await api<{ data: Array<{ number: string }> }>('GET', '/v2/telephony/search?area=80')).body
    .data;
  const number = found.filter((n) => !n.number.endsWith('5'))[skip]?.number as string;
  const quote = await api<{ id: string }>('POST', '/v2/telephony/quote', { body: { number } });
  const rented = await api<NumberBody>('POST', '/v2/telephony/rent', {
    body: { number, quote_id: quote.body.id },
  });
  assert.equal(rented.status, 201, rented.text);
  return rented.body;
}

/** Assigns the agent and turns incoming calls on. */
async function answerWith(api: Api, number: NumberBody, agentId: string): Promise<NumberBody> {
  const assigned = await api<NumberBody>('PATCH', `/v2/phone-numbers/${number.id}`, {
    body: { agent_id: agentId, version: number.version },
  });
  assert.equal(assigned.status, 200, assigned.text);
  const on = await api<NumberBody>('POST', `/v2/phone-numbers/${number.id}/incoming`, {
    body: { enabled: true, version: assigned.body.version },
  });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.body.state, 'ready');
  return on.body;
}

for (const backend of (await backends()).filter((b) => !b.databaseUrl)) {
  describe(`incoming sandbox calls (${backend.name})`, {
    skip: !SphinxTranscriber.available() && 'PocketSphinx is not installed',
  }, () => {
    let certs: TestCertificates;
    let receiver: WebhookReceiver;
    let p: TestPlatform;
    let api: Api;
    let agentId: string;
    let number: NumberBody;
    const secrets: string[] = [];

    before(async () => {
      certs = makeCertificates();
      receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
      p = await startTestPlatform(backend, {
        env: { ROLES: 'api,gateway,worker', ALLOW_PRIVATE_WEBHOOKS: '1' },
        webhookCa: certs.caPem,
      });
      const workspace = await provisionWorkspace(p.platform.store, {
        name: 'Incoming',
        mode: 'sandbox',
        balancePaise: 1_000_000,
      });
      secrets.push(workspace.webhook_secret);
      api = client(p.url, workspace.api_key);
      const agent = await api<{ id: string; webhook_url?: string }>('POST', '/v2/agents', {
        body: {
          name: 'Reception',
          system_prompt: 'You are the Acme front desk.',
          first_message: 'Hello, Acme here. How can I help?',
          voice: { voice_id: 'local-en-female' },
          max_duration_secs: 120,
          end_call: { enabled: true, message: 'Goodbye!' },
          behavior: { silence_reprompt_secs: 0 },
          webhook_url: receiver.url(),
        },
      });
      assert.equal(agent.status, 201, agent.text);
      assert.equal(agent.body.webhook_url, receiver.url());
      agentId = agent.body.id;
      number = await answerWith(api, await rentNumber(api), agentId);
    });

    after(async () => {
      await p?.close();
      await receiver?.close();
      certs?.cleanup();
    });

    async function ended(id: string): Promise<CallBody> {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
        if (TERMINAL.has(body.status)) return body;
        if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}`);
        await sleep(200);
      }
    }

    function eventsOf(id: string): string[] {
      return [...receiver.processed.values()]
        .map((raw) => JSON.parse(raw.toString('utf8')) as { type: string; data: { call: { id: string } } })
        .filter((event) => event.data.call.id === id)
        .map((event) => event.type)
        .sort();
    }

    test('a simulated caller rings the number: an inbound call that converses and completes', async () => {
      const rang = await api<CallBody>('POST', `/v2/phone-numbers/${number.id}/simulate-incoming`, {
        body: { from: CALLER },
      });
      assert.equal(rang.status, 201, rang.text);
      assert.equal(rang.body.direction, 'inbound');
      assert.equal(rang.body.from, CALLER);
      assert.equal(rang.body.to, number.number);
      assert.equal(rang.body.phone_number_id, number.id);

      const call = await ended(rang.body.id);
      assert.equal(call.status, 'completed', JSON.stringify(call));
      assert.equal(call.direction, 'inbound');
      assert.ok(call.duration_secs > 0);
      assert.equal(call.cost.amount_inr, Math.ceil((call.duration_secs * 300) / 60) / 100);
      const transcript = await api<{ turns: Array<{ speaker: string; text: string }> }>(
        'GET',
        `/v2/calls/${call.id}/transcript`,
      );
      assert.equal(transcript.status, 200, transcript.text);
      assert.ok(transcript.body.turns.some((t) => t.speaker === 'agent'));
      assert.ok(
        transcript.body.turns.some((t) => t.speaker === 'caller'),
        'the caller was heard',
      );

      const deadline = Date.now() + 20_000;
      while (eventsOf(call.id).length < 2 && Date.now() < deadline) await sleep(100);
      assert.deepEqual(eventsOf(call.id), ['call.completed', 'call.started']);
    });

    test('refusals: production workspace, another workspace, incoming off, bad caller, wallet too low', async () => {
      const path = `/v2/phone-numbers/${number.id}/simulate-incoming`;
      const other = client(
        p.url,
        (await provisionWorkspace(p.platform.store, { name: 'other', mode: 'sandbox', balancePaise: 0 }))
          .api_key,
      );
      const notFound = await other('POST', path, { body: { from: CALLER } });
      assert.equal(notFound.status, 404, notFound.text);

      const production = client(
        p.url,
        (await provisionWorkspace(p.platform.store, { name: 'prod', mode: 'production', balancePaise: 0 }))
          .api_key,
      );
      const refused = await production('POST', path, { body: { from: CALLER } });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, /sandbox workspaces/);

      const bad = await api('POST', path, { body: { from: '12345' } });
      assert.equal(bad.status, 400, bad.text);

      const off = await rentNumber(api, 1);
      const offAnswer = await api('POST', `/v2/phone-numbers/${off.id}/simulate-incoming`, {
        body: { from: CALLER },
      });
      assert.equal(offAnswer.status, 409, offAnswer.text);

      // A workspace whose wallet cannot hold the agent's 1,800 s at ₹3 a minute (₹90) after its rental.
      const poor = await provisionWorkspace(p.platform.store, {
        name: 'poor',
        mode: 'sandbox',
        balancePaise: 150_000 + 5_000,
      });
      const poorApi = client(p.url, poor.api_key);
      const long = await poorApi<{ id: string }>('POST', '/v2/agents', {
        body: { name: 'Long', voice: { voice_id: 'local-en-female' }, max_duration_secs: 1800 },
      });
      const poorNumber = await answerWith(poorApi, await rentNumber(poorApi), long.body.id);
      const low = await poorApi('POST', `/v2/phone-numbers/${poorNumber.id}/simulate-incoming`, {
        body: { from: CALLER },
      });
      assert.equal(low.status, 402, low.text);
      assert.equal(errorCode(low), 'insufficient_balance');
      const calls = await poorApi<{ data: unknown[] }>('GET', '/v2/calls');
      assert.equal(calls.body.data.length, 0, 'a rejected call leaves nothing behind');
    });
  });
}
