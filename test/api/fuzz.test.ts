/**
 * Every route, fed malformed, oversized, wrong-typed, unicode and missing input: each answer is the spec's
 * envelope with a 4xx status (never a 5xx), the server stays up, and a refused write leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { backends, client, request, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { exchange } from '../support/raw-http.ts';

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '../../etc/passwd',
    '%00',
    'null',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    '"; DROP TABLE agents; --',
    'x'.repeat(9000),
  ),
);
const value = fc.letrec((tie) => ({
  json: fc.oneof(
    { maxDepth: 3 },
    nasty,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(nasty, fc.constantFrom('name', 'voice', 'flow', 'tools', 'if_revision', 'nodes', 'edges')),
      tie('json'),
      { maxKeys: 5 },
    ),
  ),
})).json;

const agentish = fc.record(
  {
    name: value,
    system_prompt: value,
    first_message: value,
    voice: fc.oneof(value, fc.record({ voice_id: value, language: value })),
    language: value,
    max_duration_secs: value,
    behavior: value,
    tools: value,
    flow: value,
    if_revision: value,
  },
  { requiredKeys: [] },
);

const [embedded] = await backends();

describe('fuzzing every route', () => {
  let p: TestPlatform;
  let agentId: string;
  let routes: Array<{ method: string; path: string }>;
  before(async () => {
    p = await startTestPlatform(embedded!);
    const api = client(p.url, p.apiKey);
    agentId = ((await api('POST', '/v2/agents', { body: { name: 'Target' } })).body as { id: string }).id;
    const doc = (await request(p.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })),
    );
  });
  after(() => p.close());

  const isEnvelope = (body: unknown) => {
    const b = body as { error?: { code?: unknown; message?: unknown } | string; details?: unknown };
    if (typeof b?.error === 'string') return Array.isArray(b.details);
    return typeof b?.error?.code === 'string' && typeof b.error.message === 'string';
  };

  test('random bodies, ids and queries never produce a 5xx or a non-envelope error', async () => {
    const api = client(p.url, p.apiKey);
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.oneof(fc.constant(agentId), nasty.map(encodeURIComponent)),
        fc.oneof(agentish, value),
        fc.dictionary(
          fc.constantFrom('limit', 'cursor', 'starting_after', 'language', 'gender', 'if_revision', 'x'),
          nasty,
          { maxKeys: 3 },
        ),
        async (pick, id, body, query) => {
          const route = routes[pick % routes.length]!;
          const path = route.path.replace('{id}', id || 'x').replace('{revision}', String(pick % 5));
          const qs = new URLSearchParams(query).toString();
          const r = await api(
            route.method,
            `${path}${qs ? `?${qs}` : ''}`,
            route.method === 'GET' || route.method === 'DELETE' ? {} : { body },
          );
          assert.ok(
            r.status < 500 || r.status === 501,
            `${route.method} ${path} -> ${r.status} ${r.text.slice(0, 200)}`,
          );
          if (r.status >= 400)
            assert.ok(isEnvelope(r.body), `${route.method} ${path}: ${r.text.slice(0, 200)}`);
        },
      ),
      { numRuns: 400, seed: 20261125 },
    );
    assert.equal((await request(p.url, 'GET', '/healthz')).status, 200);
  });

  test('raw garbage bodies and headers are refused cleanly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 2048 }),
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/octet-stream',
          'application/json; charset=latin1',
        ),
        async (bytes, type) => {
          const r = await request(p.url, 'POST', '/v2/agents', {
            key: p.apiKey,
            rawBody: Buffer.from(bytes),
            headers: { 'content-type': type },
          });
          assert.ok([201, 400].includes(r.status), `${r.status} ${r.text.slice(0, 200)}`);
          if (r.status === 400) assert.ok(isEnvelope(r.body));
        },
      ),
      { numRuns: 150, seed: 7 },
    );
  });

  test('raw HTTP of any shape is answered in the envelope whenever it is refused (a path no product serves: a plain 404)', async () => {
    const fragment = fc.oneof(
      fc.constantFrom(
        'GET',
        'POST',
        'PATCH',
        'BREW',
        '',
        ' ',
        '\t',
        '/v2/agents',
        '/v2/wallet',
        '/',
        '*',
        '%',
        '?',
      ),
      fc.constantFrom(
        'HTTP/1.1',
        'HTTP/1.0',
        'HTTP/2.0',
        'HTTP/1.1\r\n',
        '\r\n',
        '\n',
        ':',
        '\u0000',
        '\u00ff',
      ),
      fc.constantFrom('Content-Length: 5', 'Content-Length: -1', 'Transfer-Encoding: chunked', 'Expect: x'),
      fc.constantFrom(
        'Content-Type: application/json',
        `Authorization: Bearer ${'k'.repeat(40)}`,
        'Host: api',
      ),
      fc.string({ maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fragment, { maxLength: 12 }), fc.boolean(), async (parts, crlf) => {
        const text = parts.join(crlf ? '\r\n' : ' ');
        for (const response of await exchange(p.url, `${text}\r\n\r\n`, { end: true })) {
          const outsideEveryProduct = response.status === 404 && response.text === 'not found';
          if (response.status >= 400 && !outsideEveryProduct)
            assert.ok(isEnvelope(response.body), `${JSON.stringify(text)} -> ${response.text}`);
        }
      }),
      { numRuns: 200, seed: 31 },
    );
    assert.equal((await request(p.url, 'GET', '/healthz')).status, 200);
  });

  test('refused creates and updates write nothing', async () => {
    const api = client(p.url, p.apiKey);
    // The route fuzz above may have deleted the first target; this one is fresh.
    const target = ((await api('POST', '/v2/agents', { body: { name: 'Target 2' } })).body as { id: string })
      .id;
    const count = async () => {
      const r = await api('GET', '/v2/agents?limit=100');
      assert.equal(r.status, 200, r.text.slice(0, 300));
      return (r.body as { data: unknown[] }).data.length;
    };
    const revisions = async () =>
      ((await api('GET', `/v2/agents/${target}/revisions?limit=100`)).body as { data: unknown[] }).data
        .length;
    const agentsBefore = await count();
    const revisionsBefore = await revisions();
    let created = 0;
    let updated = 0;
    await fc.assert(
      fc.asyncProperty(agentish, async (body) => {
        const c = await api('POST', '/v2/agents', { body });
        if (c.status === 201) created++;
        const u = await api('PATCH', `/v2/agents/${target}`, { body });
        if (u.status === 200) updated++;
      }),
      { numRuns: 200, seed: 99 },
    );
    assert.equal(await count(), Math.min(100, agentsBefore + created));
    assert.equal(await revisions(), Math.min(100, revisionsBefore + updated));
  });
});
