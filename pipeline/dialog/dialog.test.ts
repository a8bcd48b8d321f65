import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testAgent } from '../../core/agents/testing/agents.ts';
import { type AgentSettings, DEFAULT_END_CALL } from '../../core/agents/types.ts';
import { validateFlow } from '../../core/flows/validate.ts';
import { createDialog, substitute } from './index.ts';

const base = testAgent({
  system_prompt: 'You help {{name}} with order {{order}}.',
  first_message: 'Namaste {{name}}!',
  language: 'hi-IN',
  voice: { voice_id: 'local-hi-female', language: 'hi-IN' },
  max_duration_secs: 300,
  end_call: { ...DEFAULT_END_CALL, message: 'Dhanyavaad, {{name}}.' },
});

function flowAgent(): AgentSettings {
  const checked = validateFlow(
    {
      nodes: [
        { id: 'g', type: 'globalNode', data: { prompt: 'You are Asha from Acme, speaking to {{name}}.' } },
        {
          id: 'start',
          type: 'startCall',
          data: { greeting: 'Hello {{name}}, is this a good time?', prompt: 'Confirm identity.' },
        },
        {
          id: 'collect',
          type: 'agentNode',
          data: {
            prompt: 'Ask for the pincode.',
            add_global_prompt: false,
            allow_interrupt: false,
            extraction_enabled: true,
            extraction_variables: [{ name: 'pincode', type: 'string', prompt: 'six-digit pincode' }],
          },
        },
        { id: 'bye', type: 'endCall', data: { prompt: 'Thank {{name}}; the pincode is {{pincode}}.' } },
      ],
      edges: [
        {
          id: 'e1',
          source: 'start',
          target: 'collect',
          data: { label: 'identity_confirmed', condition: 'The caller confirms who they are' },
        },
        {
          id: 'e2',
          source: 'collect',
          target: 'bye',
          data: { label: 'pincode_given', condition: 'The caller gave the pincode' },
        },
      ],
    },
    [],
  );
  assert.ok(checked.ok);
  return { ...base, end_call: { ...base.end_call, enabled: false }, flow: checked.flow };
}

test('variables fill placeholders; missing ones are dropped, not spoken', () => {
  assert.equal(
    substitute('Hi {{ name }}, order {{order}}.', { name: 'Ravi', order: 42 }),
    'Hi Ravi, order 42.',
  );
  assert.equal(substitute('Hi {{name}}, welcome.', {}), 'Hi, welcome.');
  assert.equal(substitute('No placeholders {here}', {}), 'No placeholders {here}');
});

test('single-prompt: opening, system prompt with variables, end_call with message', () => {
  const d = createDialog(base, { name: 'Ravi', order: 'A7' });
  assert.equal(d.opening(), 'Namaste Ravi!');
  const ctx = d.turnContext();
  assert.equal(ctx.system, 'You help Ravi with order A7.');
  assert.deepEqual(
    ctx.functions.map((f) => f.name),
    ['end_call'],
  );
  assert.equal(ctx.allowInterrupt, true);
  assert.deepEqual(d.onFunctionCall({ id: '1', name: 'end_call', arguments: '{}' }), {
    type: 'end_call',
    message: 'Dhanyavaad, Ravi.',
    reason: 'assistant-ended-call',
  });
  assert.deepEqual(d.onFunctionCall({ id: '2', name: 'transfer', arguments: '{}' }), {
    type: 'unknown_function',
    name: 'transfer',
  });
  const off = createDialog({ ...base, end_call: { ...base.end_call, enabled: false } }, {});
  assert.deepEqual(off.turnContext().functions, []);
  assert.equal(off.onFunctionCall({ id: '3', name: 'end_call', arguments: '{}' }).type, 'unknown_function');
});

test('flow: greeting, global prompt, edges as functions, extraction on leaving, end on endCall', () => {
  const d = createDialog(flowAgent(), { name: 'Meena' });
  assert.equal(d.opening(), 'Hello Meena, is this a good time?');
  assert.equal(d.currentNode(), 'start');
  let ctx = d.turnContext();
  assert.equal(ctx.system, 'You are Asha from Acme, speaking to Meena.\n\nConfirm identity.');
  assert.deepEqual(
    ctx.functions.map((f) => [f.name, f.description]),
    [['identity_confirmed', 'The caller confirms who they are']],
  );

  const t1 = d.onFunctionCall({ id: 'a', name: 'identity_confirmed', arguments: '{}' });
  assert.deepEqual(t1, {
    type: 'transition',
    from: 'start',
    to: 'collect',
    label: 'identity_confirmed',
    extracted: {},
  });
  ctx = d.turnContext();
  assert.equal(ctx.system, 'Ask for the pincode.', 'add_global_prompt false');
  assert.equal(ctx.allowInterrupt, false);
  assert.deepEqual(ctx.functions[0]?.parameters, {
    type: 'object',
    properties: { pincode: { type: 'string', description: 'six-digit pincode' } },
    additionalProperties: false,
  });

  assert.equal(
    d.onFunctionCall({ id: 'x', name: 'identity_confirmed', arguments: '{}' }).type,
    'unknown_function',
    'not an edge of this node',
  );
  assert.equal(d.currentNode(), 'collect');
  const t2 = d.onFunctionCall({
    id: 'b',
    name: 'pincode_given',
    arguments: '{"pincode":"380015","extra":"dropped"}',
  });
  assert.deepEqual(t2, {
    type: 'transition',
    from: 'collect',
    to: 'bye',
    label: 'pincode_given',
    extracted: { pincode: '380015' },
  });
  assert.deepEqual(d.extracted(), { pincode: '380015' });
  ctx = d.turnContext();
  assert.equal(
    ctx.system,
    'You are Asha from Acme, speaking to Meena.\n\nThank Meena; the pincode is 380015.',
  );
  assert.deepEqual(
    ctx.functions.map((f) => f.name),
    ['end_call'],
  );
  assert.equal(d.onFunctionCall({ id: 'c', name: 'end_call', arguments: '' }).type, 'end_call');
});

test('malformed extraction arguments extract nothing but still move on', () => {
  const d = createDialog(flowAgent(), {});
  d.onFunctionCall({ id: 'a', name: 'identity_confirmed', arguments: '{}' });
  const t = d.onFunctionCall({ id: 'b', name: 'pincode_given', arguments: '{not json' });
  assert.equal(t.type, 'transition');
  assert.deepEqual(d.extracted(), {});
});

test('on_call tools: all of them without a flow; in a flow, the node’s and the global node’s; built-ins win', () => {
  const tool = (name: string) =>
    ({
      name,
      phase: 'on_call',
      description: `tool ${name}`,
      parameters: { type: 'object', properties: {} },
      request: { method: 'GET', url: 'https://x.example.com', headers: {} },
      timeout_ms: 1_000,
      filler_after_ms: 1_000,
    }) as const;
  const tools = [tool('lookup'), tool('book'), tool('identity_confirmed')];
  const asAgentTools = tools.map((t) => ({ ...t }));

  const single = createDialog({ ...base, tools: asAgentTools }, {}, tools);
  assert.deepEqual(
    single.turnContext().functions.map((f) => [f.name, f.description]),
    [
      ['end_call', single.turnContext().functions[0]?.description],
      ['lookup', 'tool lookup'],
      ['book', 'tool book'],
      ['identity_confirmed', 'tool identity_confirmed'],
    ],
  );
  const action = single.onFunctionCall({ id: '1', name: 'book', arguments: '{}' });
  assert.equal(action.type, 'tool');
  assert.equal(action.type === 'tool' && action.tool.name, 'book');
  assert.deepEqual(
    createDialog(base, {}, [])
      .turnContext()
      .functions.map((f) => f.name),
    ['end_call'],
  );

  const agent = flowAgent();
  const flow = agent.flow!;
  const nodes = flow.nodes.map((n) =>
    n.id === 'g'
      ? { ...n, data: { ...n.data, tools: ['lookup'] } }
      : n.id === 'start'
        ? { ...n, data: { ...n.data, tools: ['identity_confirmed', 'book'] } }
        : n,
  );
  const d = createDialog({ ...agent, tools: asAgentTools, flow: { ...flow, nodes } }, {}, tools);
  // On start: its edge identity_confirmed stays the edge (the tool of that name is not offered there).
  assert.deepEqual(
    d.turnContext().functions.map((f) => f.name),
    ['identity_confirmed', 'book', 'lookup'],
  );
  assert.equal(d.onFunctionCall({ id: 'x', name: 'lookup', arguments: '{}' }).type, 'tool');
  assert.equal(d.currentNode(), 'start', 'a tool does not move the flow');
  assert.equal(d.onFunctionCall({ id: 'y', name: 'identity_confirmed', arguments: '{}' }).type, 'transition');
  // On collect (add_global_prompt false, no tools of its own): the global node's tools still apply.
  assert.deepEqual(
    d.turnContext().functions.map((f) => f.name),
    ['pincode_given', 'lookup'],
  );
  assert.equal(d.onFunctionCall({ id: 'z', name: 'book', arguments: '{}' }).type, 'unknown_function');
});
