import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ToolDefinition } from '../agents/types.ts';
import { makeCertificates, type TestCertificates } from '../events/testing/receiver.ts';
import { ToolRunner } from './runner.ts';
import { renderJsonBody, renderTemplate, type TemplateValues } from './template.ts';
import { ToolServer } from './testing/tool-server.ts';

const values: TemplateValues = {
  args: { q: 'a b&c=d/é', n: 7 },
  secrets: { key: 'line1\r\nX-Evil: 1' },
  variables: { name: 'Say "hi"\n' },
  call: { id: 'call_1', to: '+919876543210' },
  agent: { id: 'agt_1' },
};

test('values are escaped for where they land', () => {
  assert.equal(
    renderTemplate('https://x.example/s?q={{ args.q }}&to={{call.to}}', values, 'url'),
    'https://x.example/s?q=a%20b%26c%3Dd%2F%C3%A9&to=%2B919876543210',
  );
  assert.equal(renderTemplate('Bearer {{ secrets.key }}', values, 'header'), 'Bearer line1  X-Evil: 1');
  assert.equal(
    renderTemplate('{"n":"{{ variables.name }}"}', values, 'json_string'),
    '{"n":"Say \\"hi\\"\\n"}',
  );
  assert.deepEqual(
    renderJsonBody({ n: '{{ args.n }}', s: 'to {{ call.to }}', list: ['{{ agent.id }}'] }, values),
    {
      n: 7,
      s: 'to +919876543210',
      list: ['agt_1'],
    },
  );
});

let certs: TestCertificates;
let server: ToolServer;
before(async () => {
  certs = makeCertificates();
  server = await ToolServer.start(certs);
  server.on('/ok', () => ({ json: { ok: true } }));
  server.on('/moved', () => ({ status: 302, json: {} }));
  server.on('/big', () => ({ json: { pad: 'x'.repeat(1_100_000) } }));
});
after(async () => {
  await server.close();
  certs.cleanup();
});

const tool = (url: string): ToolDefinition => ({
  name: 't',
  phase: 'pre_call',
  request: { method: 'GET', url, headers: {} },
  timeout_ms: 3_000,
});
const context = { workspaceId: 'w', callId: 'c', agentId: 'a', to: '', variables: {} };
const noSecrets = { reveal: async () => ({}) };

test('the address guard refuses a host that resolves to loopback unless private targets are allowed', async () => {
  const url = server.url('/ok').replace('127.0.0.1', 'localhost');
  const guarded = new ToolRunner({ secrets: noSecrets, allowPrivate: false, extraCa: certs.caPem });
  const open = new ToolRunner({ secrets: noSecrets, allowPrivate: true, extraCa: certs.caPem });
  try {
    const refused = await guarded.run(tool(url), context);
    assert.equal(refused.status, 'failed');
    assert.match(refused.error ?? '', /internal address/);
    assert.equal(server.requestsTo('/ok').length, 0);
    const allowed = await open.run(tool(url), context);
    assert.equal(allowed.status, 'succeeded');
    assert.deepEqual(allowed.response, { ok: true });
    // No redirect is followed, and no more than 1 MB of an answer is read.
    assert.deepEqual([(await open.run(tool(server.url('/moved')), context)).httpStatus], [302]);
    assert.equal((await open.run(tool(server.url('/moved')), context)).status, 'failed');
    const big = await open.run(tool(server.url('/big')), context);
    assert.equal(big.status, 'failed');
    assert.match(big.error ?? '', /larger than/);
  } finally {
    await guarded.close();
    await open.close();
  }
});
