/** Agents over real HTTP: every field of the spec's Agent table, its bounds and defaults, and revisions. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

type Agent = Record<string, unknown> & { id: string; revision: number };
type Api = ReturnType<typeof client>;

const message = (r: { body: Record<string, unknown> }) => (r.body.error as { message: string }).message;

const flow = {
  nodes: [
    { id: 'global', type: 'globalNode', data: { prompt: 'You are Asha from Acme.' } },
    {
      id: 'start',
      type: 'startCall',
      data: { name: 'Greet', greeting: 'Namaste {{name}}!', prompt: 'Greet.' },
    },
    {
      id: 'ask',
      type: 'agentNode',
      data: {
        name: 'Ask',
        prompt: 'Ask about the order.',
        extraction_enabled: true,
        extraction_variables: [{ name: 'order_id', type: 'string', prompt: 'the order number' }],
      },
    },
    { id: 'bye', type: 'endCall', data: { name: 'Bye', prompt: 'Thank and end.' } },
  ],
  edges: [
    {
      id: 'e1',
      source: 'start',
      target: 'ask',
      data: { label: 'caller_ready', condition: 'The caller can talk' },
    },
    {
      id: 'e2',
      source: 'ask',
      target: 'bye',
      data: { label: 'order_known', condition: 'The order id is known' },
    },
  ],
};

for (const backend of await backends()) {
  describe(`agents (${backend.name})`, () => {
    let p: TestPlatform;
    let api: Api;
    before(async () => {
      p = await startTestPlatform(backend);
      api = client(p.url, p.apiKey);
    });
    after(() => p.close());

    const create = async (body: Record<string, unknown>) => {
      const r = await api<Agent>('POST', '/v2/agents', { body });
      assert.equal(r.status, 201, r.text);
      return r.body;
    };

    test('create fills every default of the Agent table', async () => {
      const a = await create({ name: 'Support' });
      assert.match(a.id, /^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(a.object, 'agent');
      assert.equal(a.revision, 1);
      assert.equal(a.draft, false);
      assert.equal(a.archived, false);
      assert.deepEqual(a.analysis, { enabled: false });
      assert.equal(a.system_prompt, '');
      assert.equal(a.first_message, '');
      assert.equal(a.language, 'en-IN');
      assert.deepEqual(a.voice, { voice_id: 'local-en-male', language: 'en-IN' });
      assert.deepEqual(a.secondary_languages, []);
      assert.equal(a.max_duration_secs, 300);
      assert.deepEqual(a.end_call, {
        enabled: true,
        message: '',
        confirm: false,
        after_silence_reprompts: 2,
      });
      assert.deepEqual(a.voicemail, { action: 'hangup' });
      assert.deepEqual(a.background_sound, { sound: 'off' });
      assert.deepEqual(a.behavior, {
        interruptions: 'normal',
        adaptive_interruptions: true,
        min_interrupt_ms: 300,
        min_words: 0,
        endpointing_ms: 500,
        silence_reprompt_secs: 6,
        silence_reprompt_message: '',
        dnc_on_opt_out: true,
        speculative_replies: true,
      });
      assert.deepEqual(a.tools, []);
      assert.equal('flow' in a, false);
      assert.match(String(a.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const read = await api<Agent>('GET', `/v2/agents/${a.id}`);
      assert.deepEqual(read.body, a);
    });

    test('a Hindi agent gets a Hindi voice; a voice that does not speak the language is refused', async () => {
      const a = await create({ name: 'Hindi', language: 'hi-IN', first_message: 'Namaste {{name}}' });
      assert.deepEqual(a.voice, { voice_id: 'local-hi-male', language: 'hi-IN' });
      const r = await api('POST', '/v2/agents', {
        body: { name: 'x', voice: { voice_id: 'local-ta-female', language: 'gu-IN' } },
      });
      assert.equal(r.status, 400);
      assert.equal(errorCode(r), 'invalid_request');
      assert.match(message(r), /^voice\.language/);
    });

    test('bounds: every violation is 400 invalid_request naming the field', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{}, /^name is required/],
        [{ name: '' }, /^name/],
        [{ name: 42 }, /^name must be a string/],
        [{ name: 'a', system_prompt: 'x'.repeat(8001) }, /^system_prompt must be at most 8000 characters/],
        [{ name: 'a', first_message: 'x'.repeat(501) }, /^first_message must be at most 500 characters/],
        [{ name: 'a', max_duration_secs: 29 }, /^max_duration_secs must be at least 30/],
        [{ name: 'a', max_duration_secs: 1801 }, /^max_duration_secs must be at most 1800/],
        [{ name: 'a', max_duration_secs: 60.5 }, /^max_duration_secs/],
        [{ name: 'a', max_duration_secs: '300' }, /^max_duration_secs must be a number/],
        [{ name: 'a', voice: { voice_id: 'no-such-voice' } }, /^voice\.voice_id: unknown voice/],
        [{ name: 'a', voice: {} }, /^voice\.voice_id is required/],
        [{ name: 'a', language: 'not a language' }, /^language/],
        [{ name: 'a', behavior: { interruptions: 'sometimes' } }, /^behavior\.interruptions must be one of/],
        [{ name: 'a', end_call: { enabled: 'yes' } }, /^end_call\.enabled must be a boolean/],
        [{ name: 'a', voicemail: { action: 'leave_message' } }, /^voicemail\.message/],
        [{ name: 'a', background_sound: { sound: 'cafe' } }, /^background_sound\.sound must be one of "off"/],
        [{ name: 'a', secondary_languages: ['hi-IN', 3] }, /^secondary_languages\[1\]/],
        [{ name: 'a', colour: 'blue' }, /^colour: unknown field/],
        [{ name: 'a', voice: { voice_id: 'local-en-male', pitch: 2 } }, /^voice\.pitch: unknown field/],
      ];
      for (const [body, pattern] of cases) {
        const r = await api('POST', '/v2/agents', { body });
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(errorCode(r), 'invalid_request');
        assert.match(message(r), pattern, JSON.stringify(body).slice(0, 80));
      }
      const edge = await create({
        name: 'Edges',
        system_prompt: 'x'.repeat(8000),
        first_message: 'y'.repeat(500),
        max_duration_secs: 1800,
      });
      assert.equal((edge.system_prompt as string).length, 8000);
      assert.equal((await create({ name: 'Short', max_duration_secs: 30 })).max_duration_secs, 30);
    });

    test('silence settings: bounds, round trip, PATCH merge, and a flow node of its own', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [
          { behavior: { silence_reprompt_secs: 1 } },
          /^behavior\.silence_reprompt_secs must be 0 \(off\) or 2-60/,
        ],
        [{ behavior: { silence_reprompt_secs: 61 } }, /^behavior\.silence_reprompt_secs/],
        [{ behavior: { silence_reprompt_secs: 2.5 } }, /^behavior\.silence_reprompt_secs/],
        [{ behavior: { silence_reprompt_secs: -1 } }, /^behavior\.silence_reprompt_secs/],
        [{ behavior: { silence_reprompt_message: 'x'.repeat(501) } }, /^behavior\.silence_reprompt_message/],
        [{ end_call: { after_silence_reprompts: 11 } }, /^end_call\.after_silence_reprompts/],
        [{ end_call: { after_silence_reprompts: -1 } }, /^end_call\.after_silence_reprompts/],
      ];
      for (const [body, pattern] of cases) {
        const r = await api('POST', '/v2/agents', { body: { name: 'a', ...body } });
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(errorCode(r), 'invalid_request');
        assert.match(message(r), pattern, JSON.stringify(body).slice(0, 80));
      }
      const off = await create({ name: 'Off', behavior: { silence_reprompt_secs: 0 } });
      assert.equal((off.behavior as Record<string, unknown>).silence_reprompt_secs, 0);

      const a = await create({
        name: 'Patient',
        behavior: { silence_reprompt_secs: 60, silence_reprompt_message: 'x'.repeat(500) },
        end_call: { after_silence_reprompts: 10 },
      });
      assert.equal((a.behavior as Record<string, unknown>).silence_reprompt_secs, 60);
      assert.equal((a.end_call as Record<string, unknown>).after_silence_reprompts, 10);
      assert.deepEqual((await api<Agent>('GET', `/v2/agents/${a.id}`)).body, a);
      const patched = await api<Agent>('PATCH', `/v2/agents/${a.id}`, {
        body: { behavior: { silence_reprompt_message: 'Hello, are you there?' } },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.behavior, {
        ...(a.behavior as object),
        silence_reprompt_message: 'Hello, are you there?',
      });

      const nodeFlow = structuredClone(flow);
      Object.assign(nodeFlow.nodes[2]!.data, {
        silence_reprompt_secs: 12,
        silence_reprompt_message: 'Still there?',
      });
      const saved = await api<Agent>('PUT', `/v2/agents/${a.id}/flow`, { body: nodeFlow });
      assert.equal(saved.status, 200, saved.text);
      const nodes = (saved.body.flow as { nodes: Array<{ id: string; data: Record<string, unknown> }> })
        .nodes;
      const ask = nodes.find((n) => n.id === 'ask');
      assert.equal(ask?.data.silence_reprompt_secs, 12);
      assert.equal(ask?.data.silence_reprompt_message, 'Still there?');
      assert.equal('silence_reprompt_secs' in (nodes.find((n) => n.id === 'bye')?.data ?? {}), false);
      Object.assign(nodeFlow.nodes[2]!.data, { silence_reprompt_secs: 1 });
      const bad = await api('PUT', `/v2/agents/${a.id}/flow`, { body: nodeFlow });
      assert.equal(bad.status, 400);
      assert.equal(errorCode(bad), 'invalid_flow');
      assert.match(bad.text, /nodes\[2\]\.data\.silence_reprompt_secs/);
    });

    test('calls_from names a phone pool: an unknown pool is 404', async () => {
      const r = await api('POST', '/v2/agents', {
        body: { name: 'a', calls_from: { pool_id: 'ppl_01JAAAAAAAAAAAAAAAAAAAAAAA' } },
      });
      assert.equal(r.status, 404);
      assert.equal(errorCode(r), 'not_found');
    });

    test('webhook_url of incoming calls: https only, never a private address, PATCH null clears it', async () => {
      for (const url of [
        'http://hooks.example.com/calls',
        'https://127.0.0.1/hooks',
        'https://localhost/x',
      ]) {
        const r = await api('POST', '/v2/agents', { body: { name: 'w', webhook_url: url } });
        assert.equal(r.status, 400, `${url}: ${r.text}`);
        assert.match(r.text, /webhook_url/);
      }
      const made = await api<{ id: string; webhook_url?: string }>('POST', '/v2/agents', {
        body: { name: 'w', webhook_url: 'https://hooks.example.com/calls' },
      });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.webhook_url, 'https://hooks.example.com/calls');
      const guarded = await api('PATCH', `/v2/agents/${made.body.id}`, {
        body: { webhook_url: 'https://10.0.0.7/hooks' },
      });
      assert.equal(guarded.status, 400, guarded.text);
      const cleared = await api<{ webhook_url?: string }>('PATCH', `/v2/agents/${made.body.id}`, {
        body: { webhook_url: null },
      });
      assert.equal(cleared.status, 200, cleared.text);
      assert.equal(cleared.body.webhook_url, undefined);
    });

    test('PATCH is partial: objects merge, other fields stay, revision rises', async () => {
      const a = await create({
        name: 'Patchy',
        system_prompt: 'Be brief.',
        behavior: { min_interrupt_ms: 400 },
      });
      const r = await api<Agent>('PATCH', `/v2/agents/${a.id}`, {
        body: { behavior: { adaptive_interruptions: false }, end_call: { message: 'Bye!' } },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.revision, 2);
      assert.equal(r.body.system_prompt, 'Be brief.');
      assert.deepEqual(r.body.behavior, { ...(a.behavior as object), adaptive_interruptions: false });
      assert.deepEqual(r.body.end_call, { ...(a.end_call as object), message: 'Bye!' });
      assert.equal(r.body.created_at, a.created_at);
      const voice = await api<Agent>('PATCH', `/v2/agents/${a.id}`, {
        body: { voice: { voice_id: 'openai-nova' } },
      });
      assert.deepEqual(voice.body.voice, { voice_id: 'openai-nova', language: 'en-IN' });
      const bad = await api('PATCH', `/v2/agents/${a.id}`, { body: { max_duration_secs: 5000 } });
      assert.equal(bad.status, 400);
      assert.equal(
        (await api<Agent>('GET', `/v2/agents/${a.id}`)).body.revision,
        3,
        'a refused save writes nothing',
      );
    });

    test('analysis: prompts and structured data fields are kept; PATCH merges them one level deep', async () => {
      const fields = [
        { name: 'delivery_date', type: 'string', description: 'The date the caller agreed to' },
        { name: 'items', type: 'number', description: 'How many items the order has' },
        { name: 'wants_callback', type: 'boolean', description: 'Whether the caller asked for a callback' },
      ];
      const a = await create({
        name: 'Analysed',
        analysis: {
          enabled: true,
          summary_prompt: 'Summarise for the delivery team.',
          success_criteria: 'The caller confirmed a date.',
          structured_data: fields,
        },
      });
      assert.deepEqual(a.analysis, {
        enabled: true,
        summary_prompt: 'Summarise for the delivery team.',
        success_criteria: 'The caller confirmed a date.',
        structured_data: fields,
      });
      assert.deepEqual((await create({ name: 'Just on', analysis: { enabled: true } })).analysis, {
        enabled: true,
      });
      assert.deepEqual(
        (await create({ name: 'Prompt only', analysis: { summary_prompt: 'Brief.' } })).analysis,
        {
          enabled: false,
          summary_prompt: 'Brief.',
        },
      );

      const off = await api<Agent>('PATCH', `/v2/agents/${a.id}`, { body: { analysis: { enabled: false } } });
      assert.equal(off.status, 200, off.text);
      assert.deepEqual(off.body.analysis, { ...(a.analysis as object), enabled: false });
      const fewer = await api<Agent>('PATCH', `/v2/agents/${a.id}`, {
        body: { analysis: { structured_data: [fields[1]], success_criteria: '' } },
      });
      assert.deepEqual(
        fewer.body.analysis,
        { enabled: false, summary_prompt: 'Summarise for the delivery team.', structured_data: [fields[1]] },
        'a list is replaced as a whole; an empty prompt falls back to the default',
      );
      const cleared = await api<Agent>('PATCH', `/v2/agents/${a.id}`, {
        body: { analysis: { structured_data: [], summary_prompt: '' } },
      });
      assert.deepEqual(cleared.body.analysis, { enabled: false });
      const revision = await api('GET', `/v2/agents/${a.id}/revisions/1`);
      assert.deepEqual((revision.body.agent as Agent).analysis, a.analysis);
    });

    test('analysis bounds: every violation is 400 invalid_request naming the field', async () => {
      const field = { name: 'order_id', type: 'string', description: 'The order number' };
      const analysis = (value: Record<string, unknown>) => ({ name: 'a', analysis: value });
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [analysis({ enabled: 'yes' }), /^analysis\.enabled must be a boolean/],
        [
          analysis({ summary_prompt: 'x'.repeat(2001) }),
          /^analysis\.summary_prompt must be at most 2000 characters/,
        ],
        [
          analysis({ success_criteria: 'x'.repeat(2001) }),
          /^analysis\.success_criteria must be at most 2000 characters/,
        ],
        [analysis({ structured_data: {} }), /^analysis\.structured_data must be an array/],
        [
          analysis({ structured_data: Array.from({ length: 21 }, (_, i) => ({ ...field, name: `f${i}` })) }),
          /^analysis\.structured_data must have at most 20 items/,
        ],
        [
          analysis({ structured_data: [field, { ...field, name: '2nd value' }] }),
          /^analysis\.structured_data\[1\]\.name must be an identifier of at most 64 characters/,
        ],
        [
          analysis({ structured_data: [{ ...field, name: 'x'.repeat(65) }] }),
          /^analysis\.structured_data\[0\]\.name must be an identifier/,
        ],
        [
          analysis({ structured_data: [{ ...field, type: 'date' }] }),
          /^analysis\.structured_data\[0\]\.type must be one of "string", "number", "boolean"/,
        ],
        [
          analysis({ structured_data: [{ ...field, description: 'x'.repeat(501) }] }),
          /^analysis\.structured_data\[0\]\.description must be at most 500 characters/,
        ],
        [
          analysis({ structured_data: [{ name: 'order_id', type: 'string' }] }),
          /^analysis\.structured_data\[0\]\.description is required/,
        ],
        [
          analysis({ structured_data: [{ ...field, required: true }] }),
          /^analysis\.structured_data\[0\]\.required: unknown field/,
        ],
        [analysis({ structured_data: [field, field] }), /^analysis\.structured_data\[1\]\.name: duplicate/],
        [analysis({ sentiment: true }), /^analysis\.sentiment: unknown field/],
      ];
      for (const [body, pattern] of cases) {
        const r = await api('POST', '/v2/agents', { body });
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(errorCode(r), 'invalid_request');
        assert.match(message(r), pattern, JSON.stringify(body).slice(0, 80));
      }
      const edge = await create({
        name: 'Edges',
        analysis: {
          enabled: true,
          summary_prompt: 'x'.repeat(2000),
          success_criteria: 'y'.repeat(2000),
          structured_data: Array.from({ length: 20 }, (_, i) => ({
            name: `f${String(i).padStart(2, '0')}${'v'.repeat(61)}`,
            type: 'boolean',
            description: 'z'.repeat(500),
          })),
        },
      });
      assert.equal((edge.analysis as { structured_data: unknown[] }).structured_data.length, 20);
      const a = await create({ name: 'Patched bounds' });
      const bad = await api('PATCH', `/v2/agents/${a.id}`, {
        body: { analysis: { structured_data: [{ ...field, type: 'list' }] } },
      });
      assert.equal(bad.status, 400);
      assert.match(message(bad), /^analysis\.structured_data\[0\]\.type must be one of/);
      assert.equal((await api<Agent>('GET', `/v2/agents/${a.id}`)).body.revision, 1);
    });

    test('if_revision refuses a stale save with 409 conflict', async () => {
      const a = await create({ name: 'Stale' });
      assert.equal(
        (await api('PATCH', `/v2/agents/${a.id}`, { body: { name: 'B', if_revision: 1 } })).status,
        200,
      );
      const stale = await api('PATCH', `/v2/agents/${a.id}`, { body: { name: 'C', if_revision: 1 } });
      assert.equal(stale.status, 409);
      assert.equal(errorCode(stale), 'conflict');
      const current = await api<Agent>('GET', `/v2/agents/${a.id}`);
      assert.equal(current.body.name, 'B');
      assert.equal(current.body.revision, 2);
    });

    test('concurrent saves each get their own revision', async () => {
      const a = await create({ name: 'Busy' });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api<Agent>('PATCH', `/v2/agents/${a.id}`, { body: { first_message: `m${i}` } }),
        ),
      );
      const revisions = results.map((r) => r.body.revision).sort((x, y) => x - y);
      assert.deepEqual(revisions, [2, 3, 4, 5, 6, 7, 8, 9]);
      const list = await api<{ data: unknown[] }>('GET', `/v2/agents/${a.id}/revisions?limit=100`);
      assert.equal(list.body.data.length, 9);
    });

    test('revisions: list, read, roll back to one (a new revision), publish a draft', async () => {
      const a = await create({ name: 'Draft', draft: true, system_prompt: 'v1' });
      await api('PATCH', `/v2/agents/${a.id}`, { body: { system_prompt: 'v2' } });
      await api('PATCH', `/v2/agents/${a.id}`, { body: { system_prompt: 'v3' } });
      const page1 = await api<{
        data: Array<Record<string, unknown>>;
        has_more: boolean;
        next_cursor: string;
      }>('GET', `/v2/agents/${a.id}/revisions?limit=2`);
      assert.deepEqual(
        page1.body.data.map((r) => r.revision),
        [3, 2],
      );
      assert.equal(page1.body.has_more, true);
      const page2 = await api<{ data: Array<Record<string, unknown>>; has_more: boolean }>(
        'GET',
        `/v2/agents/${a.id}/revisions?limit=2&cursor=${page1.body.next_cursor}`,
      );
      assert.deepEqual(
        page2.body.data.map((r) => r.revision),
        [1],
      );
      assert.equal(page2.body.has_more, false);
      const one = await api('GET', `/v2/agents/${a.id}/revisions/1`);
      assert.equal(one.body.object, 'agent_revision');
      assert.equal(one.body.reason, 'create');
      assert.equal((one.body.agent as Record<string, unknown>).system_prompt, 'v1');
      assert.equal((await api('GET', `/v2/agents/${a.id}/revisions/9`)).status, 404);
      assert.equal(errorCode(await api('GET', `/v2/agents/${a.id}/revisions/zero`)), 'invalid_request');

      const rolled = await api<Agent>('POST', `/v2/agents/${a.id}/revisions/1/rollback`);
      assert.equal(rolled.status, 200, rolled.text);
      assert.equal(rolled.body.revision, 4);
      assert.equal(rolled.body.system_prompt, 'v1');
      const r4 = await api('GET', `/v2/agents/${a.id}/revisions/4`);
      assert.equal(r4.body.reason, 'rollback');
      assert.equal(r4.body.restored_from, 1);
      const staleRollback = await api('POST', `/v2/agents/${a.id}/revisions/2/rollback`, {
        body: { if_revision: 3 },
      });
      assert.equal(staleRollback.status, 409);

      assert.equal(rolled.body.draft, true);
      const published = await api<Agent>('POST', `/v2/agents/${a.id}/publish`, { body: { if_revision: 4 } });
      assert.equal(published.status, 200, published.text);
      assert.equal(published.body.draft, false);
      assert.equal(published.body.revision, 5);
      const again = await api('POST', `/v2/agents/${a.id}/publish`);
      assert.equal(again.status, 409);
      assert.equal(errorCode(again), 'conflict');
    });

    test('flows: save, read, validate with every problem listed, and clear', async () => {
      const a = await create({
        name: 'Flowy',
        tools: [
          {
            name: 'lookup_order',
            phase: 'on_call',
            description: 'Look an order up',
            request: { url: 'https://example.com' },
          },
        ],
      });
      const saved = await api<Agent>('PUT', `/v2/agents/${a.id}/flow`, { body: flow });
      assert.equal(saved.status, 200, saved.text);
      assert.equal(saved.body.revision, 2);
      const nodes = (saved.body.flow as typeof flow & { nodes: Array<{ data: Record<string, unknown> }> })
        .nodes;
      assert.deepEqual(nodes[1]?.data, {
        name: 'Greet',
        prompt: 'Greet.',
        greeting: 'Namaste {{name}}!',
        is_start: true,
        allow_interrupt: true,
        add_global_prompt: true,
        extraction_enabled: false,
        extraction_variables: [],
        tools: [],
      });
      const read = await api('GET', `/v2/agents/${a.id}/flow`);
      assert.equal(read.body.revision, 2);
      assert.deepEqual(read.body.nodes, saved.body.flow && (saved.body.flow as { nodes: unknown }).nodes);
      assert.equal((await api('GET', `/v2/agents/${a.id}/revisions/2`)).body.reason, 'flow');

      const broken = {
        nodes: [
          { id: 'start', type: 'startCall', data: { tools: ['lookup_order', 'send_sms'] } },
          { id: 'start', type: 'agentNode' },
          { id: 'lost', type: 'mystery' },
        ],
        edges: [
          { id: 'e1', source: 'start', target: 'nowhere', data: { label: 'bad label', condition: '' } },
        ],
      };
      const r = await api<{ error: string; details: Array<{ path: string; message: string }> }>(
        'PUT',
        `/v2/agents/${a.id}/flow`,
        { body: broken },
      );
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_flow');
      const paths = r.body.details.map((d) => d.path);
      for (const expected of [
        'flow.nodes[0].data.tools[1]',
        'flow.nodes[1].id',
        'flow.nodes[2].type',
        'flow.edges[0].target',
        'flow.edges[0].data.label',
        'flow.edges[0].data.condition',
      ]) {
        assert.ok(paths.includes(expected), `missing ${expected} in ${paths.join(', ')}`);
      }
      assert.equal((await api<Agent>('GET', `/v2/agents/${a.id}`)).body.revision, 2);
      const stale = await api('PUT', `/v2/agents/${a.id}/flow?if_revision=1`, { body: flow });
      assert.equal(stale.status, 409);

      const removeTool = await api<{ error: string; details: Array<{ path: string }> }>(
        'PATCH',
        `/v2/agents/${a.id}`,
        {
          body: {
            tools: [],
            flow: {
              ...flow,
              nodes: flow.nodes.map((n) =>
                n.id === 'ask' ? { ...n, data: { ...n.data, tools: ['lookup_order'] } } : n,
              ),
            },
          },
        },
      );
      assert.equal(removeTool.body.error, 'invalid_flow');
      assert.equal(removeTool.body.details[0]?.path, 'flow.nodes[2].data.tools[0]');

      const cleared = await api<Agent>('PATCH', `/v2/agents/${a.id}`, { body: { flow: null } });
      assert.equal('flow' in cleared.body, false);
      assert.equal((await api('GET', `/v2/agents/${a.id}/flow`)).status, 404);
    });

    test('invalid tools answer the flat invalid_tools body', async () => {
      const r = await api<{ error: string; details: Array<{ path: string }> }>('POST', '/v2/agents', {
        body: {
          name: 't',
          tools: [
            { name: 'a', phase: 'pre_call', request: { url: 'https://example.com' } },
            { name: 'a', phase: 'post_call', request: { url: 'https://example.com' } },
          ],
        },
      });
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_tools');
      assert.deepEqual(
        r.body.details.map((d) => d.path),
        ['tools[1].name'],
      );
    });

    test('list is newest first and cursor-paginated; delete is soft and then 404', async () => {
      const fresh = await startTestPlatform(backend);
      try {
        const c = client(fresh.url, fresh.apiKey);
        const ids: string[] = [];
        for (let i = 0; i < 5; i++)
          ids.push(((await c('POST', '/v2/agents', { body: { name: `A${i}` } })).body as Agent).id);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: {
            body: { data: Agent[]; has_more: boolean; next_cursor: string | null; object: string };
          } = await c('GET', `/v2/agents?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(page.body.object, 'list');
          seen.push(...page.body.data.map((a) => a.id));
          cursor = page.body.next_cursor;
          assert.equal(page.body.has_more, cursor !== null);
        } while (cursor);
        assert.deepEqual(seen, [...ids].reverse());
        const after = await c<{ data: Agent[] }>('GET', `/v2/agents?starting_after=${ids[3]}`);
        assert.deepEqual(
          after.body.data.map((a) => a.id),
          ids.slice(0, 3).reverse(),
        );
        assert.equal(errorCode(await c('GET', '/v2/agents?limit=0')), 'invalid_request');
        assert.equal(errorCode(await c('GET', '/v2/agents?limit=101')), 'invalid_request');
        assert.equal(errorCode(await c('GET', '/v2/agents?cursor=%%%')), 'invalid_request');
        assert.equal(errorCode(await c('GET', '/v2/agents?sort=asc')), 'invalid_request');

        const del = await c('DELETE', `/v2/agents/${ids[2]}`);
        assert.deepEqual(del.body, { id: ids[2], object: 'agent', deleted: true });
        assert.equal((await c('GET', `/v2/agents/${ids[2]}`)).status, 404);
        assert.equal((await c('PATCH', `/v2/agents/${ids[2]}`, { body: { name: 'z' } })).status, 404);
        assert.equal((await c('DELETE', `/v2/agents/${ids[2]}`)).status, 404);
        const all = await c<{ data: Agent[] }>('GET', '/v2/agents?limit=100');
        assert.equal(all.body.data.length, 4);
      } finally {
        await fresh.close();
      }
    });
  });
}
