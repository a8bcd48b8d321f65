import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateFlow } from './validate.ts';

const start = { id: 's', type: 'startCall', data: { greeting: 'Hi {{name}}' } };

test('a minimal flow gets every default', () => {
  const r = validateFlow({ nodes: [start] }, []);
  assert.ok(r.ok);
  assert.deepEqual(r.flow.edges, []);
  assert.equal(r.flow.nodes[0]?.data.is_start, true);
  assert.equal(r.flow.nodes[0]?.data.allow_interrupt, true);
});

test('every problem is listed at once with its path', () => {
  const r = validateFlow(
    {
      nodes: [
        start,
        { id: 's2', type: 'startCall' },
        { id: 'g', type: 'globalNode', data: { greeting: 'no' } },
        {
          id: 'a',
          type: 'agentNode',
          data: { extraction_variables: [{ name: '1bad', type: 'date' }], colour: 1 },
        },
        { id: 'e', type: 'endCall' },
      ],
      edges: [
        { id: 'x', source: 'e', target: 'a', data: { label: 'go', condition: 'always' } },
        { id: 'y', source: 's', target: 'g', data: { label: 'go', condition: 'always' } },
        { id: 'z', source: 's', target: 'a', data: { label: 'go', condition: 'always' } },
      ],
    },
    [],
  );
  assert.ok(!r.ok);
  const paths = r.details.map((d) => d.path);
  assert.deepEqual(paths.sort(), [
    'flow.edges[0].source',
    'flow.edges[1].target',
    'flow.edges[2].data.label',
    'flow.nodes',
    'flow.nodes[2].data.greeting',
    'flow.nodes[3].data.colour',
    'flow.nodes[3].data.extraction_variables[0].name',
    'flow.nodes[3].data.extraction_variables[0].type',
  ]);
});

test('unreachable nodes are reported once the graph is otherwise valid', () => {
  const r = validateFlow({ nodes: [start, { id: 'lonely', type: 'agentNode' }] }, []);
  assert.ok(!r.ok);
  assert.deepEqual(r.details, [
    { path: 'flow.nodes[1]', message: 'node "lonely" cannot be reached from the startCall node' },
  ]);
});

test('node tools must be on_call tools of the agent', () => {
  const tools = [
    { name: 'lookup', phase: 'on_call' as const },
    { name: 'crm_sync', phase: 'post_call' as const },
  ];
  const r = validateFlow({ nodes: [{ ...start, data: { tools: ['lookup', 'crm_sync', 7] } }] }, tools);
  assert.ok(!r.ok);
  assert.deepEqual(
    r.details.map((d) => d.path),
    ['flow.nodes[0].data.tools[1]', 'flow.nodes[0].data.tools[2]'],
  );
});

test('a node cannot offer a tool and an edge of the same name (the global node: any edge)', () => {
  const tools = [
    { name: 'transfer', phase: 'on_call' as const },
    { name: 'lookup', phase: 'on_call' as const },
  ];
  const r = validateFlow(
    {
      nodes: [
        { id: 'g', type: 'globalNode', data: { tools: ['lookup'] } },
        { ...start, data: { tools: ['transfer'] } },
        { id: 'next', type: 'agentNode', data: { tools: ['transfer'] } },
      ],
      edges: [{ id: 'e1', source: 's', target: 'next', data: { label: 'transfer', condition: 'c' } }],
    },
    tools,
  );
  assert.ok(!r.ok);
  assert.deepEqual(
    r.details.map((d) => d.path),
    ['flow.nodes[1].data.tools[0]'],
  );
  const global = validateFlow(
    {
      nodes: [
        { id: 'g', type: 'globalNode', data: { tools: ['lookup'] } },
        { ...start, data: { tools: [] } },
        { id: 'next', type: 'agentNode' },
      ],
      edges: [{ id: 'e1', source: 's', target: 'next', data: { label: 'lookup', condition: 'c' } }],
    },
    tools,
  );
  assert.ok(!global.ok);
  assert.deepEqual(
    global.details.map((d) => d.path),
    ['flow.nodes[0].data.tools[0]'],
  );
});

test('non-objects and empty graphs are refused', () => {
  for (const input of [null, [], 'flow', { nodes: [] }, { nodes: [start], edges: 'none' }]) {
    assert.equal(validateFlow(input, []).ok, false);
  }
});
