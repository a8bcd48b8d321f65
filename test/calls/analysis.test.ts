/** Post-call analysis against a real loopback Chat Completions server, and with the scripted dialog engine. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testAgent } from '../../core/agents/testing/agents.ts';
import type { AgentSettings } from '../../core/agents/types.ts';
import {
  type AnalyzeCallOptions,
  analyzeCall,
  NO_MODEL_REASON,
  TRANSCRIPT_CHARS_MAX,
  transcriptText,
  UNRECOGNIZED_SPEECH_LINE,
} from '../../core/calls/analysis.ts';
import type { TranscriptEntry } from '../../core/calls/artifacts.ts';
import { ScriptedDialogModel } from '../../engines/llm/providers/scripted.ts';
import { useFakeServer } from '../../engines/llm/testing/openai-fixtures.ts';

const fake = useFakeServer();

const NOW = Date.UTC(2026, 9, 15, 10, 30);

const agent: AgentSettings = testAgent({
  analysis: {
    enabled: true,
    summary_prompt: 'Summarise in one sentence for the delivery team.',
    success_criteria: 'Success means the caller confirmed a delivery date.',
    structured_data: [
      { name: 'delivery_date', type: 'string', description: 'The date the caller agreed to' },
      { name: 'items', type: 'number', description: 'How many items the order has' },
      { name: 'wants_callback', type: 'boolean', description: 'Whether the caller asked to be called back' },
      { name: 'rating', type: 'number', description: 'How the caller rated the service, 1-5' },
    ],
  },
});

const transcript: TranscriptEntry[] = [
  {
    speaker: 'agent',
    text: 'Hello Ravi, this is Asha from Acme.',
    start_ms: 0,
    end_ms: 1800,
    interrupted: false,
  },
  {
    speaker: 'caller',
    text: 'Hi, when will my three items arrive?',
    start_ms: 2200,
    end_ms: 4000,
    interrupted: false,
  },
  { speaker: 'agent', text: 'They can come on Friday the', start_ms: 4500, end_ms: 6000, interrupted: true },
  {
    speaker: 'caller',
    text: 'Friday works. Call me back tomorrow.',
    start_ms: 6100,
    end_ms: 8000,
    interrupted: false,
  },
];

const extracted = { order_id: 'A-1234' };

const options = (overrides: Partial<AnalyzeCallOptions> = {}): AnalyzeCallOptions => ({
  llm: fake.model({ maxAttempts: 1 }),
  settings: agent,
  transcript,
  extracted,
  timeoutMs: 5_000,
  now: () => NOW,
  ...overrides,
});

const GOOD_ANSWER = JSON.stringify({
  summary: 'Ravi agreed to a Friday delivery of his three items and asked for a callback.',
  success: { passed: true, reason: 'The caller confirmed Friday.' },
  structured_data: { delivery_date: 'Friday', items: 3, wants_callback: true, rating: 'excellent' },
});

describe('with a language model', () => {
  test('a JSON answer becomes the analysis; a value of the wrong type becomes null', async () => {
    fake.server.set({ reply: { text: GOOD_ANSWER } });
    const analysis = await analyzeCall(options());
    assert.deepEqual(analysis, {
      status: 'completed',
      summary: 'Ravi agreed to a Friday delivery of his three items and asked for a callback.',
      success: { passed: true, reason: 'The caller confirmed Friday.' },
      structured_data: { delivery_date: 'Friday', items: 3, wants_callback: true, rating: null },
      extracted: { order_id: 'A-1234' },
      model: 'openai:fake-model',
      generated_at: '2026-10-15T10:30:00.000Z',
    });
  });

  test('values that plainly are of the type are coerced; missing fields are null', async () => {
    const answer = {
      summary: 'x',
      success: { passed: 'false', reason: 'No date was agreed.' },
      structured_data: { delivery_date: 42, items: ' 1,200 ', wants_callback: 'yes' },
    };
    fake.server.set({ reply: { text: JSON.stringify(answer) } });
    const analysis = await analyzeCall(options());
    assert.deepEqual(analysis.success, { passed: false, reason: 'No date was agreed.' });
    assert.deepEqual(analysis.structured_data, {
      delivery_date: '42',
      items: 1200,
      wants_callback: true,
      rating: null,
    });
  });

  test('the JSON object is found inside prose and code fences', async () => {
    const text = `Sure! Here is the analysis {as asked}:\n\`\`\`json\n${GOOD_ANSWER}\n\`\`\`\nLet me know.`;
    fake.server.set({ reply: { text } });
    const analysis = await analyzeCall(options());
    assert.equal(analysis.status, 'completed');
    assert.equal(analysis.success.passed, true);
    assert.equal(analysis.structured_data.delivery_date, 'Friday');
  });

  test('an answer without the JSON object fails, with every field null', async () => {
    fake.server.set({ reply: { text: 'The call went well, I think. {not json at all' } });
    const analysis = await analyzeCall(options());
    assert.equal(analysis.status, 'failed');
    assert.match(analysis.error ?? '', /did not answer with the analysis JSON object/);
    assert.equal(analysis.summary, null);
    assert.deepEqual(analysis.success, { passed: null, reason: null });
    assert.deepEqual(analysis.structured_data, {
      delivery_date: null,
      items: null,
      wants_callback: null,
      rating: null,
    });
    assert.deepEqual(analysis.extracted, extracted);
    assert.equal(analysis.model, 'openai:fake-model');
  });

  test('a slow model fails by the time bound instead of holding the call', async () => {
    fake.server.set({ reply: { text: GOOD_ANSWER, firstTokenLatencyMs: 2_000 } });
    const started = Date.now();
    const analysis = await analyzeCall(options({ timeoutMs: 150 }));
    assert.ok(Date.now() - started < 1_500, 'returned at the bound');
    assert.equal(analysis.status, 'failed');
    assert.match(analysis.error ?? '', /timed out after 150 ms/);
    assert.ok(await fake.server.settled(), 'the request was aborted');
  });

  test('an HTTP 500 fails with the engine error', async () => {
    fake.server.set({ failFirst: { count: 5, status: 500 } });
    const analysis = await analyzeCall(options());
    assert.equal(analysis.status, 'failed');
    assert.match(analysis.error ?? '', /^the language model failed: /);
    assert.equal(analysis.summary, null);
  });

  test("the request carries the agent's prompts, fields, instructions, collected values and transcript", async () => {
    fake.server.set({ reply: { text: GOOD_ANSWER } });
    await analyzeCall(options());
    assert.equal(fake.server.requests.length, 1);
    const body = fake.server.requests[0]?.body;
    assert.equal(body?.temperature, 0);
    const [system, user] = body?.messages ?? [];
    assert.equal(system?.role, 'system');
    const prompt = system?.content ?? '';
    assert.match(prompt, /ONE JSON object/);
    assert.match(prompt, /Summarise in one sentence for the delivery team\./);
    assert.match(prompt, /Success means the caller confirmed a delivery date\./);
    assert.match(prompt, /- items \(number\): How many items the order has/);
    assert.match(prompt, /- wants_callback \(boolean\): Whether the caller asked to be called back/);
    assert.match(prompt, /You are Asha from Acme/);
    assert.match(prompt, /"order_id":"A-1234"/);
    assert.equal(user?.role, 'user');
    const lines = (user?.content ?? '').split('\n');
    assert.deepEqual(lines.slice(1), [
      'AGENT: Hello Ravi, this is Asha from Acme.',
      'CALLER: Hi, when will my three items arrive?',
      'AGENT: They can come on Friday the [interrupted]',
      'CALLER: Friday works. Call me back tomorrow.',
    ]);
  });

  test('without prompts or fields the defaults ask for a generic summary and success verdict', async () => {
    fake.server.set({
      reply: { text: '{"summary": "A short call.", "success": {"passed": true, "reason": "Done."}}' },
    });
    const plain = testAgent({ analysis: { enabled: true } });
    const analysis = await analyzeCall(options({ settings: plain }));
    assert.equal(analysis.status, 'completed');
    assert.deepEqual(analysis.structured_data, {});
    const prompt = fake.server.requests[0]?.body?.messages?.[0]?.content ?? '';
    assert.match(prompt, /Summarise the call in 2-3 sentences/);
    assert.match(prompt, /achieved the goal its instructions set out/);
    assert.match(prompt, /structured_data: an empty object/);
  });
});

describe('without a language model or a conversation', () => {
  test('the scripted engine is not asked: no summary or verdict is invented, the extracted values are kept', async () => {
    const analysis = await analyzeCall(options({ llm: new ScriptedDialogModel() }));
    assert.deepEqual(analysis, {
      status: 'completed',
      summary: null,
      success: { passed: null, reason: NO_MODEL_REASON },
      structured_data: { delivery_date: null, items: null, wants_callback: null, rating: null },
      extracted: { order_id: 'A-1234' },
      model: 'none',
      generated_at: '2026-10-15T10:30:00.000Z',
    });
    assert.equal(fake.server.requests.length, 0);
  });

  test('a call where nothing was said is skipped without a request', async () => {
    for (const empty of [[], [{ ...transcript[0], text: '  ' } as TranscriptEntry]]) {
      const analysis = await analyzeCall(options({ transcript: empty, extracted: {} }));
      assert.equal(analysis.status, 'skipped');
      assert.equal(analysis.model, 'none');
      assert.equal(analysis.summary, null);
    }
    assert.equal(fake.server.requests.length, 0);
  });
});

describe('the transcript sent', () => {
  test('keeps at most the last 40,000 characters, from a whole line', () => {
    const long: TranscriptEntry[] = Array.from({ length: 2_000 }, (_, i) => ({
      speaker: i % 2 === 0 ? 'agent' : 'caller',
      text: `turn ${i} ${'words '.repeat(5)}`,
      start_ms: i * 1000,
      end_ms: i * 1000 + 900,
      interrupted: false,
    }));
    const text = transcriptText(long);
    assert.ok(text.length <= TRANSCRIPT_CHARS_MAX, `${text.length} characters`);
    const lines = text.split('\n');
    assert.equal(lines[0], '[the start of the call is left out]');
    assert.match(lines[1] ?? '', /^(AGENT|CALLER): turn \d+ /);
    assert.match(lines.at(-1) ?? '', /^CALLER: turn 1999 /);
  });

  test('a caller turn without recognised words reads as unrecognised speech, never as nothing', () => {
    const turns: TranscriptEntry[] = [
      { speaker: 'agent', text: 'Namaste Ravi!', start_ms: 0, end_ms: 900, interrupted: false },
      { speaker: 'caller', text: '', recognized: false, start_ms: 1500, end_ms: 2600, interrupted: false },
    ];
    assert.equal(transcriptText(turns), `AGENT: Namaste Ravi!\nCALLER: ${UNRECOGNIZED_SPEECH_LINE}`);
  });
});
