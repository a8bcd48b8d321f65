import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolDefinition } from '../agents/types.ts';
import { validateTools } from './definition.ts';
import { checkArguments, MAX_ARGUMENTS_CHARS, resultForModel, TOOL_RESULT_CHARS } from './on-call.ts';
import type { ToolRunOutcome } from './runner.ts';

const rules = { secrets: new Set<string>(), allowPrivate: false };
const lookup = {
  name: 'order_status',
  phase: 'on_call',
  description: 'Where an order is',
  parameters: {
    type: 'object',
    properties: { order_id: { type: 'string', pattern: '^A[0-9]+$' }, items: { type: 'integer' } },
    required: ['order_id'],
    additionalProperties: false,
  },
  request: { url: 'https://crm.example.com/orders/{{ args.order_id }}', method: 'GET' },
};

test('filler_after_ms: on_call only, 0 or 200-10,000, default 1,000; end_call is reserved', () => {
  const saved = validateTools([lookup], rules);
  assert.ok(saved.ok);
  assert.equal(saved.tools[0]?.filler_after_ms, 1_000);
  const off = validateTools([{ ...lookup, filler_after_ms: 0 }], rules);
  assert.ok(off.ok && off.tools[0]?.filler_after_ms === 0);
  const bad = validateTools(
    [
      { ...lookup, filler_after_ms: 50 },
      { ...lookup, name: 'b', filler_after_ms: 1.5 },
      { name: 'c', phase: 'pre_call', request: { url: 'https://x.example.com' }, filler_after_ms: 500 },
      { ...lookup, name: 'end_call' },
    ],
    rules,
  );
  assert.ok(!bad.ok);
  assert.deepEqual(
    bad.details.map((d) => d.path),
    ['tools[0].filler_after_ms', 'tools[1].filler_after_ms', 'tools[2].filler_after_ms', 'tools[3].name'],
  );
});

test("the model's arguments are checked against the tool's parameters", () => {
  const checked = validateTools([lookup], rules);
  assert.ok(checked.ok);
  const tool = checked.tools[0] as ToolDefinition;
  assert.deepEqual(checkArguments(tool, '{"order_id":"A17","items":2}'), {
    ok: true,
    args: { order_id: 'A17', items: 2 },
  });
  assert.deepEqual(checkArguments(tool, '{not json'), { ok: false, error: 'invalid arguments: not JSON' });
  assert.deepEqual(checkArguments(tool, '[1]'), {
    ok: false,
    error: 'invalid arguments: must be a JSON object',
  });
  const wrong = checkArguments(tool, '{"order_id":17,"extra":true}');
  assert.ok(!wrong.ok);
  assert.match(wrong.error, /\/order_id must be string/);
  assert.match(wrong.error, /must NOT have additional properties/);
  assert.deepEqual(checkArguments(tool, `{"order_id":"${'1'.repeat(MAX_ARGUMENTS_CHARS)}"}`), {
    ok: false,
    error: `invalid arguments: more than ${MAX_ARGUMENTS_CHARS} characters`,
  });
  const missing = checkArguments(tool, '');
  assert.ok(!missing.ok);
  assert.match(missing.error, /must have required property 'order_id'/);
});

test('what the model reads of a run: result or error, bounded', () => {
  const run: ToolRunOutcome = {
    name: 'order_status',
    phase: 'on_call',
    status: 'succeeded',
    httpStatus: 200,
    startedAt: 0,
    durationMs: 40,
    response: { eta: 'Friday' },
  };
  assert.deepEqual(JSON.parse(resultForModel(run)), { ok: true, status: 200, result: { eta: 'Friday' } });
  assert.deepEqual(
    JSON.parse(
      resultForModel({
        ...run,
        status: 'timeout',
        httpStatus: null,
        response: undefined,
        error: 'no answer',
      }),
    ),
    { ok: false, error: 'no answer', timed_out: true },
  );
  assert.deepEqual(
    JSON.parse(resultForModel({ ...run, status: 'failed', httpStatus: 404, response: { e: 1 }, error: 'x' })),
    { ok: false, error: 'x', status: 404, result: { e: 1 } },
  );
  const big = resultForModel({ ...run, response: { rows: 'y'.repeat(50_000) } });
  assert.ok(big.length <= TOOL_RESULT_CHARS, String(big.length));
  const parsed = JSON.parse(big) as { truncated: boolean; result: string };
  assert.equal(parsed.truncated, true);
  assert.ok(parsed.result.startsWith('{"rows":"yyy'));
});
