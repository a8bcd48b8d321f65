/**
 * The legacy v1 product over real HTTP, addressed by its host: keys and workspace, v1 bodies and errors (never
 * v2's, and v2 never v1's), assistants with every field round-tripping and read as v2 agents, the update
 * cooldown, the variants' prompts, calls placed, updated and aborted (api role: they stay queued), archiving,
 * the voice gallery, the routes not built yet, and `/v1/openapi.json`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Clock } from '../../core/clock.ts';
import { callKnowledge } from '../../core/v1/knowledge.ts';
import { KNOWLEDGE_PER_TURN_NOTE } from '../../core/v1/mapping.ts';
import { minimalPdf } from '../../core/v1/testing/pdf.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { hostRequest, V1_HOST, type V1Keys, v1Client } from './support.ts';

type Assistant = Record<string, unknown> & { _id: string };

/** Every field of the Assistant table, with values of the kinds the interface shows. */
const FULL_ASSISTANT = {
  name: 'Cart recovery',
  variant: {
    type: 'abandoned_cart',
    config: {
      inputSchema: [
        {
          name: 'customer',
          type: 'object',
          isRequired: true,
          fields: [{ name: 'name', type: 'string', isRequired: true }],
        },
      ],
      variableSchema: { properties: { customerName: { type: 'string' } }, required: ['customerName'] },
      abandoned_cart: {
        paymentPlan: { mode: 'both', additionalFee: { cod: 49 } },
        supportContacts: { phoneNumber: '+911800123456', email: 'help@shop.example' },
      },
    },
  },
  agent: {
    identity: { name: 'Rahul', gender: 'male', voice: 'local-hi-male' },
    systemPrompt: 'The shop is Kurta Kart; mention free shipping above ₹999.',
    firstMessage: 'Namaste {{customerName}}, Kurta Kart se Rahul bol raha hoon.',
    endMessage: 'Dhanyavaad, aapka din shubh ho!',
    tools: [{ integration_id: 'shopify-1', tools: ['get_order', 'create_checkout_link'] }],
  },
  telephony: { inbound: 'pn_inbound_1', outbound: 'pn_outbound_1' },
  icpContext: {
    targetAgeGroups: ['gen_z'],
    locationTiers: ['metro_urban'],
    language: 'hinglish',
    targetAudience: ['male'],
  },
  callSettings: {
    slots: [
      { startTime: '10:00', endTime: '13:00' },
      { startTime: '17:30', endTime: '20:00' },
    ],
    retryProtocol: {
      maxAttemptsNoPickup: 3,
      maxAttemptsLowEngagement: 1,
      reAttemptPeriod: 120,
      maxRescheduleCount: 2,
    },
    maxCallDuration: 240,
    concurrentCallCount: 3,
  },
  analysisPlan: {
    successCriteriaPlan: 'The customer completed checkout or asked for the link.',
    summaryPlan: 'Summarise why the cart was abandoned.',
    callInsightPlan: { reasons: ['price', 'delivery', 'payment'] },
  },
  knowledgeBase: {
    documents: [{ url: 'https://shop.example/returns.pdf', title: 'Returns policy', type: 'pdf' }],
    faq: [{ question: 'Is COD available?', answer: 'Yes, with a ₹49 fee.' }],
  },
  timezone: 'Asia/Kolkata',
};

/** The integration FULL_ASSISTANT's `agent.tools` names. */
const SHOPIFY_INTEGRATION = {
  integration_id: 'shopify-1',
  name: 'Shopify',
  tools: [
    {
      name: 'get_order',
      phase: 'on_call',
      description: 'Look an order up by its id',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      request: { method: 'GET', url: 'https://shop.example/api/orders/{{ args.order_id }}' },
    },
    {
      name: 'create_checkout_link',
      phase: 'on_call',
      description: 'Make a checkout link for the cart',
      parameters: { type: 'object', properties: { cart_id: { type: 'string' } }, required: ['cart_id'] },
      request: {
        method: 'POST',
        url: 'https://shop.example/api/checkout',
        body: { cart: '{{ args.cart_id }}' },
      },
    },
    {
      name: 'unused_tool',
      phase: 'on_call',
      description: 'Not taken',
      request: { url: 'https://shop.example/x' },
    },
  ],
};

const PDF_LINES = [
  'Cash on delivery orders pay a fee of 49 rupees at the door.',
  'Orders converted to prepaid before dispatch pay no fee.',
];

async function createIntegration(v1: ReturnType<typeof v1Client>): Promise<void> {
  const r = await v1('POST', '/v1/admin/tools/create', { body: SHOPIFY_INTEGRATION });
  assert.equal(r.status, 201, r.text);
}

describe('legacy v1 API (sqlite+memory)', () => {
  let p: TestPlatform;
  let keys: V1Keys;
  let v1: ReturnType<typeof v1Client>;
  let v2: ReturnType<typeof client>;
  let offsetMs = 0;
  const clock: Clock = { now: () => Date.now() + offsetMs };

  before(async () => {
    p = await startTestPlatform(
      { name: 'sqlite+memory' },
      { env: { V1_HOST, ALLOW_PRIVATE_WEBHOOKS: '1' }, clock },
    );
    const workspace = await provisionWorkspace(p.platform.store, {
      name: 'Shop',
      mode: 'sandbox',
      balancePaise: 50_000,
    });
    keys = workspace.v1;
    v1 = v1Client(p.url, keys);
    v2 = client(p.url, workspace.api_key);
    await createIntegration(v1);
  });
  after(() => p.close());

  const create = async (body: Record<string, unknown>) => {
    const r = await v1<{ status_code: number; message: string; data: Assistant }>(
      'POST',
      '/v1/admin/assistant/create',
      { body },
    );
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status_code, 201);
    return r.body.data;
  };

  test('keys: missing or wrong 401, another workspace 403, in the v1 error body', async () => {
    const bare = await hostRequest(p.url, 'GET', '/v1/admin/assistant/list', { host: V1_HOST });
    assert.equal(bare.status, 401);
    assert.deepEqual(Object.keys(bare.body).sort(), ['code', 'message']);
    assert.equal(bare.body.code, 401);
    const wrong = await v1('GET', '/v1/admin/assistant/list', {
      headers: { 'x-private-key': `sk_v1_${'0'.repeat(48)}` },
    });
    assert.deepEqual([wrong.status, wrong.body.code], [401, 401]);
    const other = await v1('GET', '/v1/admin/assistant/list', { headers: { workspace: 'ws_someone_else' } });
    assert.deepEqual([other.status, other.body.code], [403, 403]);
    // Without `workspace`, the keys' own workspace.
    const own = await v1Client(p.url, keys, { workspace: false })('GET', '/v1/admin/assistant/list');
    assert.equal(own.status, 200, own.text);
  });

  test("v1 and v2 on one server never answer in each other's shapes", async () => {
    const v1Missing = await v1('GET', '/v1/admin/assistant/get/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    assert.deepEqual(v1Missing.body, { code: 404, message: v1Missing.body.message });
    const v1Unknown = await v1('GET', '/v2/agents');
    assert.equal(v1Unknown.status, 404, 'v2 routes are not served on the v1 host');
    assert.equal(v1Unknown.body.code, 404);
    assert.equal(v1Unknown.body.error, undefined);
    const v1Malformed = await v1('POST', '/v1/admin/assistant/create', { rawBody: '{"name":' });
    assert.deepEqual([v1Malformed.status, v1Malformed.body.code], [400, 400]);

    const v2Unauthorized = await hostRequest(p.url, 'GET', '/v2/agents');
    assert.equal(v2Unauthorized.status, 401);
    assert.deepEqual(Object.keys(v2Unauthorized.body), ['error']);
    const v2OnV1Path = await hostRequest(p.url, 'POST', '/v2/call/initiate', {
      headers: { authorization: `Bearer ${p.apiKey}` },
      body: {},
    });
    assert.equal(v2OnV1Path.status, 404, 'v1 call routes are not served on the v2 host');
    assert.equal((v2OnV1Path.body.error as { code: string }).code, 'not_found');
    // v1 keys mean nothing to v2, a v2 key nothing to v1.
    const v2WithV1Keys = await hostRequest(p.url, 'GET', '/v2/agents', {
      headers: { 'x-public-key': keys.public_key, 'x-private-key': keys.private_key },
    });
    assert.equal((v2WithV1Keys.body.error as { code: string }).code, 'unauthorized');
    const v1WithV2Key = await hostRequest(p.url, 'GET', '/v1/admin/assistant/list', {
      host: V1_HOST,
      headers: { authorization: `Bearer ${p.apiKey}` },
    });
    assert.deepEqual([v1WithV2Key.status, v1WithV2Key.body.code], [401, 401]);
  });

  test("answers given before v1's routes are in v1's shape on the v1 host, and v2's on the v2 host", async () => {
    const v1Shape = (r: { status: number; body: Record<string, unknown> }, status: number) => {
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body).sort(), ['code', 'message'], JSON.stringify(r.body));
      assert.equal(r.body.code, status);
    };
    const badUrl = '/v1/admin/assistant/get/%E0%A4%A';
    v1Shape(await v1('GET', badUrl), 400);
    const v2BadUrl = await hostRequest(p.url, 'GET', badUrl);
    assert.equal(v2BadUrl.status, 400);
    assert.deepEqual(Object.keys(v2BadUrl.body), ['error']);
    v1Shape(await v1('GET', `/v1/admin/assistant/get/agt_${'x'.repeat(300)}`), 400);
    v1Shape(await v1('DELETE', '/v1/admin/assistant/list'), 404);
    v1Shape(
      await v1('POST', '/v1/admin/assistant/create', { headers: { expect: 'something-else' }, body: {} }),
      400,
    );
    const tooLarge = await v1('POST', '/v1/admin/assistant/create', {
      rawBody: JSON.stringify({ name: 'x'.repeat(1_100_000) }),
    });
    v1Shape(tooLarge, 400);
    assert.match(String(tooLarge.body.message), /limit/);
    v1Shape(
      await v1('POST', '/v1/admin/assistant/create', {
        rawBody: 'name=x',
        headers: { 'content-type': 'text/plain' },
      }),
      400,
    );
    v1Shape(
      await v1('POST', '/v1/admin/assistant/create', {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      }),
      400,
    );
  });

  test('every Assistant field round-trips through create, get and list', async () => {
    const created = await create(FULL_ASSISTANT);
    assert.match(created._id, /^agt_/);
    const { _id, createdAt, archivedAt, ...fields } = created;
    assert.deepEqual(fields, FULL_ASSISTANT);
    assert.equal(archivedAt, null);
    assert.ok(!Number.isNaN(Date.parse(String(createdAt))));

    const got = await v1<{ status_code: number; message: string; data: Assistant }>(
      'GET',
      `/v1/admin/assistant/get/${_id}`,
    );
    assert.equal(got.status, 200);
    assert.equal(got.body.status_code, 200);
    assert.deepEqual(got.body.data, created);

    const list = await v1<{ message: string; data: Assistant[] }>('GET', '/v1/admin/assistant/list');
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.body).sort(), ['data', 'message']);
    assert.deepEqual(
      list.body.data.find((a) => a._id === _id),
      created,
    );
  });

  test('an assistant is a v2 agent: prompt, messages, voice, duration, analysis; and a v2 agent is an assistant', async () => {
    const created = await create(FULL_ASSISTANT);
    const agent = await v2<Record<string, unknown>>('GET', `/v2/agents/${created._id}`);
    assert.equal(agent.status, 200, agent.text);
    assert.equal(agent.body.name, 'Cart recovery');
    assert.equal(agent.body.first_message, FULL_ASSISTANT.agent.firstMessage);
    assert.deepEqual(agent.body.voice, { voice_id: 'local-hi-male', language: 'hi-IN' });
    assert.equal(agent.body.language, 'hi-IN');
    assert.equal(agent.body.max_duration_secs, 240);
    assert.equal((agent.body.end_call as { message: string }).message, FULL_ASSISTANT.agent.endMessage);
    assert.deepEqual(agent.body.analysis, {
      enabled: true,
      summary_prompt: FULL_ASSISTANT.analysisPlan.summaryPlan,
      success_criteria: FULL_ASSISTANT.analysisPlan.successCriteriaPlan,
    });
    const prompt = String(agent.body.system_prompt);
    for (const part of [
      'Rahul',
      'Hinglish',
      'abandoned cart',
      '₹49',
      '+911800123456',
      'Kurta Kart',
      'Is COD available?',
    ])
      assert.ok(prompt.includes(part), `the prompt has "${part}": ${prompt}`);

    // An edit in v2 shows in v1 where the fields meet; the v1-only fields stay.
    const patched = await v2('PATCH', `/v2/agents/${created._id}`, {
      body: { name: 'Cart recovery 2', max_duration_secs: 600 },
    });
    assert.equal(patched.status, 200, patched.text);
    const read = await v1<{ data: Assistant }>('GET', `/v1/admin/assistant/get/${created._id}`);
    assert.equal(read.body.data.name, 'Cart recovery 2');
    assert.equal((read.body.data.callSettings as { maxCallDuration: number }).maxCallDuration, 600);
    assert.deepEqual(read.body.data.icpContext, FULL_ASSISTANT.icpContext);
    assert.deepEqual(read.body.data.variant, FULL_ASSISTANT.variant);

    const made = await v2<{ id: string }>('POST', '/v2/agents', {
      body: { name: 'Made in v2', system_prompt: 'Help.', first_message: 'Hello!', max_duration_secs: 90 },
    });
    const asAssistant = await v1<{ data: Assistant }>('GET', `/v1/admin/assistant/get/${made.body.id}`);
    assert.equal(asAssistant.status, 200, asAssistant.text);
    assert.equal(asAssistant.body.data.name, 'Made in v2');
    assert.deepEqual(
      [
        (asAssistant.body.data.agent as { firstMessage: string }).firstMessage,
        (asAssistant.body.data.agent as { systemPrompt: string }).systemPrompt,
      ],
      ['Hello!', 'Help.'],
    );
  });

  test('updates merge, and a second update inside the 30 s cooldown is a 429 naming the wait', async () => {
    const created = await create({ name: 'Confirm', variant: { type: 'order_confirmation' } });
    const first = await v1<{ data: Assistant }>('PUT', `/v1/admin/assistant/update/${created._id}`, {
      body: { name: 'Confirm orders', agent: { endMessage: 'Thank you!' } },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.data.name, 'Confirm orders');
    assert.equal((first.body.data.agent as { endMessage: string }).endMessage, 'Thank you!');
    const second = await v1('PUT', `/v1/admin/assistant/update/${created._id}`, { body: { name: 'Again' } });
    assert.equal(second.status, 429);
    assert.equal(second.body.code, 429);
    assert.match(String(second.body.message), /retry in \d+ seconds/);
    assert.ok(Number(second.headers['retry-after']) >= 1);
    offsetMs += 30_000;
    const later = await v1<{ data: Assistant }>('PUT', `/v1/admin/assistant/update/${created._id}`, {
      body: { name: 'Again' },
    });
    assert.equal(later.status, 200, later.text);
    assert.equal(later.body.data.name, 'Again');
    assert.equal((later.body.data.agent as { endMessage: string }).endMessage, 'Thank you!');
  });

  test('bad input is a 400 naming the field; an unknown assistant a 404', async () => {
    const badVariant = await v1('POST', '/v1/admin/assistant/create', {
      body: { name: 'X', variant: { type: 'refund' } },
    });
    assert.deepEqual([badVariant.status, badVariant.body.code], [400, 400]);
    assert.match(String(badVariant.body.message), /variant\.type/);
    const badSlot = await v1('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'X',
        variant: { type: 'ndr_followup' },
        callSettings: { slots: [{ startTime: '25:00', endTime: '10:00' }] },
      },
    });
    assert.match(String(badSlot.body.message), /callSettings\.slots\[0\]\.startTime/);
    const badVoice = await v1('POST', '/v1/admin/assistant/create', {
      body: { name: 'X', variant: { type: 'ndr_followup' }, agent: { identity: { voice: 'nobody' } } },
    });
    assert.match(String(badVoice.body.message), /agent\.identity\.voice/);
    const missing = await v1('PUT', '/v1/admin/assistant/update/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ', {
      body: { name: 'Y' },
    });
    assert.deepEqual([missing.status, missing.body.code], [404, 404]);
  });

  test("each variant's config is in its prompt", async () => {
    const support = { phoneNumber: '+911800999888', email: 'care@shop.example' };
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [
        {
          type: 'abandoned_cart',
          config: { abandoned_cart: { paymentPlan: { mode: 'online' }, supportContacts: support } },
        },
        ['online only', '+911800999888'],
      ],
      [
        {
          type: 'cod_to_prepaid',
          config: { cod_to_prepaid: { paymentLinkValidity: 30, codFee: 40, supportContacts: support } },
        },
        ['valid for 30 minutes', '₹40', 'care@shop.example'],
      ],
      [
        {
          type: 'address_verification',
          config: { address_verification: { minDays: 2, maxDays: 5, supportContacts: support } },
        },
        ['2 to 5 days', '{{pincode}}'],
      ],
      [
        { type: 'order_confirmation', config: { order_confirmation: { supportContacts: support } } },
        ['confirm a new order', '+911800999888'],
      ],
      [
        {
          type: 'ndr_followup',
          config: { ndr_followup: { maxRescheduleDays: 3, webhookToken: 'tok_1', supportContacts: support } },
        },
        ['next 3 days', '{{ndrReason}}'],
      ],
    ];
    for (const [variant, parts] of cases) {
      const assistant = await create({ name: `V ${String(variant.type)}`, variant });
      const agent = await v2<{ system_prompt: string; first_message: string }>(
        'GET',
        `/v2/agents/${assistant._id}`,
      );
      for (const part of parts)
        assert.ok(
          agent.body.system_prompt.includes(part),
          `${String(variant.type)}: "${part}" in ${agent.body.system_prompt}`,
        );
      assert.match(agent.body.first_message, /\{\{customerName\}\}/);
      assert.equal(
        (assistant.agent as { firstMessage: string }).firstMessage,
        '',
        'what was not written reads back empty',
      );
    }
    const hinglish = await create({
      name: 'NDR hinglish',
      variant: { type: 'ndr_followup', config: { ndr_followup: { maxRescheduleDays: 4 } } },
      icpContext: { language: 'hinglish' },
    });
    const agent = await v2<{ system_prompt: string; language: string }>('GET', `/v2/agents/${hinglish._id}`);
    assert.match(agent.body.system_prompt, /Agle 4 din ke andar/);
    assert.equal(agent.body.language, 'hi-IN');
  });

  test('calls: initiate answers 200 with callId and status; update and abort a queued call; a v2 call underneath', async () => {
    const assistant = await create({ name: 'Caller', variant: { type: 'order_confirmation' } });
    const initiated = await v1<{
      status_code: number;
      callId: string;
      status: string;
      data: { callId: string; status: string };
    }>('POST', '/v2/call/initiate', {
      body: {
        phoneNumber: '+919876543219',
        assistant: assistant._id,
        callbackUrl: 'https://hooks.shop.example/v1',
        payload: { customerName: 'Ravi', orderId: 'KK-1001', items: [{ sku: 'K1' }] },
        metadata: { crmId: 42 },
        priority: 5,
      },
    });
    assert.equal(initiated.status, 200, initiated.text);
    assert.match(initiated.body.callId, /^call_/);
    assert.equal(initiated.body.status, 'initiate');
    assert.deepEqual(initiated.body.data, { callId: initiated.body.callId, status: 'initiate' });
    const callId = initiated.body.callId;
    const asV2 = await v2<{ status: string; agent_id: string; to: string }>('GET', `/v2/calls/${callId}`);
    assert.deepEqual(
      [asV2.body.status, asV2.body.agent_id, asV2.body.to],
      ['queued', assistant._id, '+919876543219'],
    );
    const wallet = await v2<{ held_inr: number }>('GET', '/v2/wallet');
    assert.ok(wallet.body.held_inr > 0, 'the wallet holds the worst case, as for any call');

    const updated = await v1('PUT', `/v2/call/${callId}`, {
      body: { payload: { customerName: 'Ravi K' }, priority: 9 },
    });
    assert.equal(updated.status, 200, updated.text);
    const aborted = await v1<{ status: string }>('POST', '/v2/call/abort', { body: { callId } });
    assert.equal(aborted.status, 200, aborted.text);
    assert.equal(aborted.body.status, 'aborted');
    const again = await v1('POST', '/v2/call/abort', { body: { callId } });
    assert.deepEqual([again.status, again.body.code], [400, 400]);
    const late = await v1('PUT', `/v2/call/${callId}`, { body: { priority: 1 } });
    assert.deepEqual([late.status, late.body.code], [400, 400]);
    const unknown = await v1('POST', '/v2/call/abort', {
      body: { callId: 'call_01HZZZZZZZZZZZZZZZZZZZZZZZ' },
    });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 404]);
    const badNumber = await v1('POST', '/v2/call/initiate', {
      body: { phoneNumber: '98765', assistant: assistant._id },
    });
    assert.match(String(badNumber.body.message), /phoneNumber/);
    const web = await v1('POST', '/v2/call/web', { body: { assistant: assistant._id } });
    assert.equal(web.status, 501, 'this deployment runs no media gateway');
    assert.equal(web.body.code, 501);
  });

  test("priority orders the workspace's queue: higher first, then oldest first", async () => {
    const assistant = await create({ name: 'Queue', variant: { type: 'order_confirmation' } });
    const place = async (priority: number) =>
      (
        await v1<{ callId: string }>('POST', '/v2/call/initiate', {
          body: { phoneNumber: '+919876543219', assistant: assistant._id, priority },
        })
      ).body.callId;
    const low = await place(0);
    const high = await place(7);
    const mid = await place(3);
    const queued = (await p.platform.store.calls.nextQueued(keys.workspace, 10)).map((c) => c.id);
    const ours = queued.filter((id) => [low, high, mid].includes(id));
    assert.deepEqual(ours, [high, mid, low]);
    for (const callId of [low, high, mid]) await v1('POST', '/v2/call/abort', { body: { callId } });
  });

  test('organization archiving archives its assistants and refuses their calls', async () => {
    const assistant = await create({ name: 'To archive', variant: { type: 'order_confirmation' } });
    const archived = await v1<{ data: { assistants: number } }>('POST', '/v1/admin/organization/archive');
    assert.equal(archived.status, 200, archived.text);
    assert.ok(archived.body.data.assistants >= 1);
    const read = await v1<{ data: Assistant }>('GET', `/v1/admin/assistant/get/${assistant._id}`);
    assert.ok(typeof read.body.data.archivedAt === 'string');
    const refused = await v1('POST', '/v2/call/initiate', {
      body: { phoneNumber: '+919876543219', assistant: assistant._id },
    });
    assert.deepEqual([refused.status, refused.body.code], [400, 400]);
    assert.match(String(refused.body.message), /archived/);
    const restored = await v1('POST', '/v1/admin/organization/unarchive');
    assert.equal(restored.status, 200);
    const back = await v1<{ data: Assistant }>('GET', `/v1/admin/assistant/get/${assistant._id}`);
    assert.equal(back.body.data.archivedAt, null);
  });

  test('onboarding: a new workspace with its own keys, addressable by the organization; tenants stay apart', async () => {
    const onboarded = await v1<{
      status_code: number;
      data: {
        workspace: { id: string; mode: string };
        apiKey: string;
        publicKey: string;
        privateKey: string;
      };
    }>('POST', '/v2/workspace/onboard/custom', { body: { name: 'Second shop' } });
    assert.equal(onboarded.status, 201, onboarded.text);
    const { workspace, apiKey, publicKey, privateKey } = onboarded.body.data;
    assert.equal(workspace.mode, 'sandbox');
    const there = v1Client(p.url, { ...keys, workspace: workspace.id });
    const made = await there<{ data: Assistant }>('POST', '/v1/admin/assistant/create', {
      body: { name: 'In the second shop', variant: { type: 'order_confirmation' } },
    });
    assert.equal(made.status, 201, made.text);
    // Another workspace's assistant is a 404 from the first workspace, in v1 and in v2.
    const fromFirst = await v1('GET', `/v1/admin/assistant/get/${made.body.data._id}`);
    assert.deepEqual([fromFirst.status, fromFirst.body.code], [404, 404]);
    assert.equal((await v2('GET', `/v2/agents/${made.body.data._id}`)).status, 404);
    // The new workspace's own keys, v1 and v2, see it.
    const own = v1Client(p.url, { public_key: publicKey, private_key: privateKey, workspace: workspace.id });
    assert.equal((await own('GET', `/v1/admin/assistant/get/${made.body.data._id}`)).status, 200);
    assert.equal((await client(p.url, apiKey)('GET', `/v2/agents/${made.body.data._id}`)).status, 200);
    // Its keys do not reach the organization's first workspace.
    const back = await own('GET', '/v1/admin/assistant/list', { headers: { workspace: keys.workspace } });
    assert.deepEqual([back.status, back.body.code], [403, 403]);
    const bad = await v1('POST', '/v2/workspace/onboard/custom', { body: { name: '' } });
    assert.deepEqual([bad.status, bad.body.code], [400, 400]);
  });

  test("tools: an integration's named tools become the agent's tools; unknown ones are a 400", async () => {
    const listed = await v1<{ data: Array<{ integration_id: string; tools: Array<{ name: string }> }> }>(
      'GET',
      '/v1/admin/tools/list',
    );
    assert.deepEqual(
      listed.body.data.find((i) => i.integration_id === 'shopify-1')?.tools.map((t) => t.name),
      ['get_order', 'create_checkout_link', 'unused_tool'],
    );
    const assistant = await create(FULL_ASSISTANT);
    const agent = await v2<{ tools: Array<{ name: string; phase: string; request: { url: string } }> }>(
      'GET',
      `/v2/agents/${assistant._id}`,
    );
    assert.deepEqual(
      agent.body.tools.map((t) => [t.name, t.phase]),
      [
        ['get_order', 'on_call'],
        ['create_checkout_link', 'on_call'],
      ],
    );
    const unknownIntegration = await v1('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'X',
        variant: { type: 'order_confirmation' },
        agent: { tools: [{ integration_id: 'nope', tools: ['a'] }] },
      },
    });
    assert.deepEqual([unknownIntegration.status, unknownIntegration.body.code], [400, 400]);
    assert.match(String(unknownIntegration.body.message), /agent\.tools\[0\]\.integration_id/);
    const unknownTool = await v1('POST', '/v1/admin/assistant/create', {
      body: {
        name: 'X',
        variant: { type: 'order_confirmation' },
        agent: { tools: [{ integration_id: 'shopify-1', tools: ['refund'] }] },
      },
    });
    assert.match(String(unknownTool.body.message), /agent\.tools\[0\]\.tools\[0\]/);
    const badDefinition = await v1('POST', '/v1/admin/tools/create', {
      body: {
        integration_id: 'broken',
        tools: [{ name: 'Bad Name', phase: 'on_call', request: { url: 'ftp://x' } }],
      },
    });
    assert.deepEqual([badDefinition.status, badDefinition.body.code], [400, 400]);
    assert.match(String(badDefinition.body.message), /tools\[0\]/);
  });

  test('knowledge base: documents fetched from their URL feed the prompt, the passages that matter first', async () => {
    const filler = Array.from(
      { length: 200 },
      (_, i) => `Section ${i}: our warehouse team packs orders with care and ships them quickly.`,
    );
    const pages: Record<string, string> = {
      '/returns.txt':
        'Returns are accepted within 7 days of delivery.\nRefunds reach the original payment method in 5 working days.',
      '/handbook.html': `<html><head><style>p{}</style><script>var x = 1;</script></head><body>${filler
        .map((line) => `<p>${line}</p>`)
        .join(
          '',
        )}<p>Prepaid orders paid through the payment link get a &amp; 5% cashback instead of the COD fee.</p></body></html>`,
    };
    const server = http.createServer((req, res) => {
      if (req.url === '/cod.pdf')
        return res.writeHead(200, { 'content-type': 'application/pdf' }).end(minimalPdf(PDF_LINES));
      const page = pages[req.url ?? ''];
      if (!page) return res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': req.url?.endsWith('.html') ? 'text/html' : 'text/plain' })
        .end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      const returns = await v1<{ data: { _id: string; characters: number } }>(
        'POST',
        '/v1/admin/knowledge-base/upload',
        {
          body: { url: `${base}/returns.txt`, title: 'Returns', type: 'txt' },
        },
      );
      assert.equal(returns.status, 201, returns.text);
      assert.ok(returns.body.data.characters > 50);
      const handbook = await v1('POST', '/v1/admin/knowledge-base/upload', {
        body: { url: `${base}/handbook.html`, title: 'Handbook', type: 'html' },
      });
      assert.equal(handbook.status, 201, handbook.text);
      const pdf = await v1<{ data: { characters: number; type: string } }>(
        'POST',
        '/v1/admin/knowledge-base/upload',
        { body: { url: `${base}/cod.pdf`, title: 'COD policy', type: 'pdf' } },
      );
      assert.equal(pdf.status, 201, pdf.text);
      assert.deepEqual([pdf.body.data.type, pdf.body.data.characters], ['pdf', PDF_LINES.join('\n').length]);
      const notPdf = await v1('POST', '/v1/admin/knowledge-base/upload', {
        body: { url: `${base}/returns.txt`, title: 'X', type: 'pdf' },
      });
      assert.deepEqual([notPdf.status, notPdf.body.code], [400, 400]);
      assert.match(String(notPdf.body.message), /not a PDF/);
      const missing = await v1('POST', '/v1/admin/knowledge-base/upload', {
        body: { url: `${base}/nope.txt`, title: 'X', type: 'txt' },
      });
      assert.match(String(missing.body.message), /HTTP 404/);
      const listed = await v1<{ data: Array<{ title: string }> }>('GET', '/v1/admin/knowledge-base/list');
      assert.deepEqual(listed.body.data.map((d) => d.title).sort(), ['COD policy', 'Handbook', 'Returns']);

      const assistant = await create({
        name: 'Prepaid',
        variant: { type: 'cod_to_prepaid', config: { cod_to_prepaid: { codFee: 30 } } },
        agent: { systemPrompt: 'Be brief.' },
        knowledgeBase: {
          documents: [
            { url: `${base}/returns.txt`, title: 'Returns', type: 'txt' },
            { url: `${base}/handbook.html`, title: 'Handbook', type: 'html' },
          ],
          faq: [{ question: 'Can I pay by UPI?', answer: 'Yes.' }],
        },
      });
      assert.equal((assistant.agent as { systemPrompt: string }).systemPrompt, 'Be brief.');
      const agent = await v2<{ system_prompt: string }>('GET', `/v2/agents/${assistant._id}`);
      const prompt = agent.body.system_prompt;
      assert.ok(prompt.length <= 8_000, `prompt of ${prompt.length} characters`);
      assert.ok(prompt.includes('Q: Can I pay by UPI?\nA: Yes.'), 'the FAQ is in the prompt');
      assert.ok(prompt.includes(KNOWLEDGE_PER_TURN_NOTE), 'the rest is retrieved per caller turn');
      assert.ok(
        !prompt.includes('Section 199:'),
        'documents over the budget are not truncated into the prompt',
      );
      // What a call on this assistant retrieves for a caller's question (per turn: test/v1/knowledge-call.test.ts).
      const knowledge = await callKnowledge(p.platform.store, keys.workspace, assistant._id, prompt);
      assert.ok(knowledge && knowledge.passages > 200, 'every passage is indexed');
      assert.deepEqual(
        knowledge.passagesFor('Is there any cashback if I pay by the payment link?').slice(0, 1),
        [
          '[Handbook] Prepaid orders paid through the payment link get a & 5% cashback instead of the COD fee.',
        ],
      );
      assert.deepEqual(knowledge.passagesFor('how many days for returns?').slice(0, 1), [
        '[Returns] Returns are accepted within 7 days of delivery.',
      ]);
      assert.ok(!knowledge.passagesFor('var x').some((t) => t.includes('var x')), 'scripts are not text');

      const withPdf = await create({
        name: 'COD',
        variant: { type: 'cod_to_prepaid', config: {} },
        knowledgeBase: { documents: [{ url: `${base}/cod.pdf`, title: 'COD policy', type: 'pdf' }], faq: [] },
      });
      const pdfAgent = await v2<{ system_prompt: string }>('GET', `/v2/agents/${withPdf._id}`);
      assert.ok(
        pdfAgent.body.system_prompt.includes(`[COD policy] ${PDF_LINES[0]}`),
        'the PDF text fits whole',
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("number pools are the workspace's v2 phone pools, in v1's shape", async () => {
    const created = await v1<{
      data: { _id: string; name: string; purpose: string; maxPerHour: number; numbers: string[] };
    }>('POST', '/v1/admin/number-pool/create', { body: { name: 'Reminders', purpose: 'reminders' } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.data._id, /^ppl_/);
    assert.deepEqual(
      [created.body.data.purpose, created.body.data.maxPerHour, created.body.data.numbers],
      ['reminders', 60, []],
    );
    const asV2 = await v2<{ name: string }>('GET', `/v2/phone-pools/${created.body.data._id}`);
    assert.equal(asV2.body.name, 'Reminders');
    const updated = await v1<{ data: { name: string; maxPerHour: number } }>(
      'PUT',
      `/v1/admin/number-pool/update/${created.body.data._id}`,
      {
        body: { name: 'Support line', purpose: 'support' },
      },
    );
    assert.deepEqual([updated.body.data.name, updated.body.data.maxPerHour], ['Support line', 40]);
    const listed = await v1<{ data: Array<{ _id: string }> }>('GET', '/v1/admin/number-pool/list');
    assert.ok(listed.body.data.some((pool) => pool._id === created.body.data._id));
    const deleted = await v1('DELETE', `/v1/admin/number-pool/delete/${created.body.data._id}`);
    assert.equal(deleted.status, 200, deleted.text);
    const gone = await v1('GET', `/v1/admin/number-pool/get/${created.body.data._id}`);
    assert.deepEqual([gone.status, gone.body.code], [404, 404]);
    const unknownNumber = await v1('POST', '/v1/admin/number-pool/create', {
      body: { name: 'X', numbers: ['pn_01HZZZZZZZZZZZZZZZZZZZZZZZ'] },
    });
    assert.equal(unknownNumber.body.code, unknownNumber.status);
    assert.ok(unknownNumber.status === 400 || unknownNumber.status === 404, unknownNumber.text);
  });

  test('voice gallery and the v1 OpenAPI document', async () => {
    const gallery = await v1<{ data: Array<{ voiceId: string; gender: string }> }>(
      'GET',
      '/v1/admin/voice-gallery/list',
    );
    assert.equal(gallery.status, 200);
    assert.ok(gallery.body.data.some((v) => v.voiceId === 'local-hi-male' && v.gender === 'male'));
    const doc = await hostRequest<{ openapi: string; paths: Record<string, unknown> }>(
      p.url,
      'GET',
      '/v1/openapi.json',
      { host: V1_HOST },
    );
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    for (const path of [
      '/v1/admin/assistant/list',
      '/v1/admin/assistant/get/{assistantId}',
      '/v2/call/initiate',
      '/v2/call/{callId}',
    ])
      assert.ok(path in doc.body.paths, path);
  });
});

/** A port nothing listens on, for `V1_PORT`. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Bytes written as they are to a fresh connection; what comes back until the server closes it. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

describe('legacy v1 on its own port, and its rate limit (sqlite+memory)', () => {
  test('V1_PORT serves v1 whatever the Host; over the rate, 429 in the v1 body with Retry-After', async () => {
    const port = await freePort();
    const p = await startTestPlatform(
      { name: 'sqlite+memory' },
      { env: { V1_PORT: String(port), API_RATE_PER_SEC: '1', API_RATE_BURST: '5' } },
    );
    try {
      const workspace = await provisionWorkspace(p.platform.store, {
        name: 'Rate',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const v1 = (path: string) =>
        hostRequest(`http://127.0.0.1:${port}`, 'GET', path, {
          headers: { 'x-public-key': workspace.v1.public_key, 'x-private-key': workspace.v1.private_key },
        });
      const listed = await v1('/v1/admin/assistant/list');
      assert.equal(listed.status, 200, listed.text);
      // Documents are fetched through the address guard: no loopback, no plain HTTP, unless the operator allows.
      for (const url of ['https://127.0.0.1/x.txt', 'http://shop.example/x.txt']) {
        const refused = await hostRequest(
          `http://127.0.0.1:${port}`,
          'POST',
          '/v1/admin/knowledge-base/upload',
          {
            headers: { 'x-public-key': workspace.v1.public_key, 'x-private-key': workspace.v1.private_key },
            body: { url, title: 'X', type: 'txt' },
          },
        );
        assert.deepEqual([refused.status, refused.body.code], [400, 400], refused.text);
      }
      const v2Path = await v1('/v2/agents');
      assert.deepEqual([v2Path.status, v2Path.body.code], [404, 404]);
      // What Node refuses before any route is told in v1's shape on the v1 port.
      for (const raw of [
        'NOT HTTP AT ALL\r\n\r\n',
        `GET /v1/admin/assistant/list HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ]) {
        const answer = await rawExchange(port, raw);
        assert.match(answer, /^HTTP\/1\.1 400 /, answer);
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
        assert.equal(body.code, 400);
      }
      const answers = [];
      for (let i = 0; i < 4; i += 1) answers.push(await v1('/v1/admin/assistant/list'));
      const limited = answers.find((r) => r.status === 429);
      assert.ok(limited, `statuses ${answers.map((r) => r.status).join(',')}`);
      assert.deepEqual(Object.keys(limited.body).sort(), ['code', 'message']);
      assert.equal(limited.body.code, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
    } finally {
      await p.close();
    }
  });
});

for (const backend of (await backends()).filter((b) => b.databaseUrl)) {
  describe(`legacy v1 on ${backend.name}`, () => {
    test('an assistant round-trips, its cooldown holds, and a call is initiated and aborted', async () => {
      const p = await startTestPlatform(backend, { env: { V1_HOST } });
      try {
        const workspace = await provisionWorkspace(p.platform.store, {
          name: 'Pg',
          mode: 'sandbox',
          balancePaise: 10_000,
        });
        const v1 = v1Client(p.url, workspace.v1);
        await createIntegration(v1);
        const created = await v1<{ data: Assistant }>('POST', '/v1/admin/assistant/create', {
          body: FULL_ASSISTANT,
        });
        assert.equal(created.status, 201, created.text);
        const { _id, createdAt, archivedAt, ...fields } = created.body.data;
        assert.deepEqual(fields, FULL_ASSISTANT);
        const got = await v1<{ data: Assistant }>('GET', `/v1/admin/assistant/get/${_id}`);
        assert.deepEqual(got.body.data, created.body.data);
        assert.equal(
          (await v1('PUT', `/v1/admin/assistant/update/${_id}`, { body: { name: 'A' } })).status,
          200,
        );
        assert.equal(
          (await v1('PUT', `/v1/admin/assistant/update/${_id}`, { body: { name: 'B' } })).status,
          429,
        );
        const initiated = await v1<{ callId: string }>('POST', '/v2/call/initiate', {
          body: { phoneNumber: '+919876543219', assistant: _id, metadata: { k: 1 }, priority: 3 },
        });
        assert.equal(initiated.status, 200, initiated.text);
        const aborted = await v1<{ status: string }>('POST', '/v2/call/abort', {
          body: { callId: initiated.body.callId },
        });
        assert.equal(aborted.body.status, 'aborted');
        void createdAt;
        void archivedAt;
      } finally {
        await p.close();
      }
    });
  });
}
