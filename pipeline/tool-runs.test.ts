import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ToolDefinition } from '../core/agents/types.ts';
import { makeCertificates, type TestCertificates } from '../core/events/testing/receiver.ts';
import { callTools } from '../core/tools/on-call.ts';
import { ToolRunner, type ToolRunOutcome } from '../core/tools/runner.ts';
import { ToolServer } from '../core/tools/testing/tool-server.ts';
import type { ChatMessage } from '../engines/llm/types.ts';
import { fillerLine, MAX_CONCURRENT_RUNS, PENDING_RESULT, ToolRuns } from './tool-runs.ts';

let certs: TestCertificates;
let server: ToolServer;
let runner: ToolRunner;
before(async () => {
  certs = makeCertificates();
  server = await ToolServer.start(certs);
  server.on('/slow', () => ({ json: { done: true }, delayMs: 300 }));
  server.on('/slower', () => ({ json: { done: true }, delayMs: 1_000 }));
  runner = new ToolRunner({
    secrets: { reveal: async () => ({}) },
    allowPrivate: true,
    extraCa: certs.caPem,
  });
});
after(async () => {
  await runner?.close();
  await server?.close();
  certs?.cleanup();
});

const tool = (fillerAfterMs: number, path = '/slow'): ToolDefinition => ({
  name: 'slow',
  phase: 'on_call',
  description: 'slow',
  parameters: { type: 'object', properties: {} },
  request: { method: 'GET', url: server.url(path), headers: {} },
  timeout_ms: 5_000,
  filler_after_ms: fillerAfterMs,
});

function runs(call = new AbortController()) {
  const ended: ToolRunOutcome[] = [];
  const tools = callTools(runner, { workspaceId: 'ws', callId: 'c', agentId: 'a', to: '', variables: {} });
  return { ended, call, runs: new ToolRuns(tools, call.signal, (o) => ended.push(o)) };
}
const message = (): ChatMessage => ({ role: 'tool', content: '' });

test('runs go on together up to a limit; the wait says the filler once, after the shortest delay', async () => {
  const { runs: r, ended } = runs();
  const messages = Array.from({ length: MAX_CONCURRENT_RUNS + 1 }, message);
  for (const [i, m] of messages.entries()) {
    r.start(tool(i === 2 ? 100 : 5_000, '/slower'), { id: `c${i}`, name: 'slow', arguments: '{}' }, m);
  }
  assert.equal(messages[0]?.content, PENDING_RESULT);
  assert.match(String(messages.at(-1)?.content), /too many tools at once/);
  const fillers: number[] = [];
  const started = performance.now();
  assert.equal(
    await r.wait(new AbortController().signal, () => fillers.push(performance.now() - started)),
    true,
  );
  assert.equal(fillers.length, 1);
  // After the shortest delay (100 ms), well before the runs end (1 s) or the other delays (5 s).
  assert.ok((fillers[0] ?? 0) >= 90 && (fillers[0] ?? 0) < 900, String(fillers));
  assert.equal(r.busy, false);
  for (const m of messages.slice(0, -1))
    assert.deepEqual(JSON.parse(m.content), { ok: true, status: 200, result: { done: true } });
  assert.deepEqual(ended.map((o) => o.status).sort(), [
    'failed',
    'succeeded',
    'succeeded',
    'succeeded',
    'succeeded',
  ]);
});

test('a wait ends when its reply is stopped; the run goes on and fills its message', async () => {
  const { runs: r, ended } = runs();
  const m = message();
  r.start(tool(0), { id: 'x', name: 'slow', arguments: '{}' }, m);
  const reply = new AbortController();
  setTimeout(() => reply.abort(), 50);
  let fillers = 0;
  assert.equal(await r.wait(reply.signal, () => fillers++), false);
  assert.equal(m.content, PENDING_RESULT);
  assert.equal(await r.wait(new AbortController().signal, () => fillers++), true);
  assert.equal(fillers, 0, 'filler_after_ms 0: never');
  assert.equal(JSON.parse(m.content).ok, true);
  assert.equal(ended.length, 1);
});

test('the call ending ends its runs', async () => {
  const { runs: r, ended, call } = runs();
  const m = message();
  r.start(tool(0), { id: 'x', name: 'slow', arguments: '{}' }, m);
  call.abort();
  assert.equal(await r.wait(new AbortController().signal, () => {}), true);
  assert.deepEqual(JSON.parse(m.content), { ok: false, error: 'the call ended before the tool answered' });
  assert.equal(ended[0]?.status, 'failed');
  assert.equal(fillerLine('hi-IN'), 'एक पल रुकिए।');
  assert.equal(fillerLine('xx'), 'One moment, please.');
});
