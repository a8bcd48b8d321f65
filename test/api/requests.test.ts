/** The envelope for bad requests: malformed JSON, wrong content, size and rate limits, unknown routes. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../core/clock.ts';
import {
  backends,
  client,
  errorCode,
  request,
  startTestPlatform,
  type TestPlatform,
} from '../support/platform.ts';

for (const backend of await backends()) {
  describe(`request handling (${backend.name})`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startTestPlatform(backend);
    });
    after(() => p.close());

    test('malformed JSON: 400 invalid_request naming the body', async () => {
      for (const raw of ['{', '{"name":', 'nul', '{"name":"a",}', '\u0000']) {
        const r = await request(p.url, 'POST', '/v2/agents', {
          key: p.apiKey,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 400, raw);
        assert.equal(errorCode(r), 'invalid_request');
        assert.match((r.body.error as { message: string }).message, /^body/);
      }
    });

    test('a JSON body that is not an object, and a missing body, name the body', async () => {
      const api = client(p.url, p.apiKey);
      for (const body of [[], 'text', 7, null]) {
        const r = await api('POST', '/v2/agents', { body });
        assert.equal(r.status, 400);
        assert.equal(errorCode(r), 'invalid_request');
      }
      const none = await api('POST', '/v2/agents');
      assert.equal(none.status, 400);
      assert.match((none.body.error as { message: string }).message, /body/);
    });

    test('a body that is not JSON: 400', async () => {
      const r = await request(p.url, 'POST', '/v2/agents', {
        key: p.apiKey,
        rawBody: 'name=a',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(r.status, 400);
      assert.equal(errorCode(r), 'invalid_request');
    });

    test('bodies over 1 MB are refused with 413 in the envelope; just under is parsed', async () => {
      const big = JSON.stringify({ name: 'a', system_prompt: 'x'.repeat(1_048_576) });
      const r = await request(p.url, 'POST', '/v2/agents', {
        key: p.apiKey,
        rawBody: big,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 413);
      assert.equal(errorCode(r), 'body_too_large');
      assert.match((r.body.error as { message: string }).message, /limit/);
      const under = JSON.stringify({ name: 'a', system_prompt: 'x'.repeat(1_040_000) });
      const u = await request(p.url, 'POST', '/v2/agents', {
        key: p.apiKey,
        rawBody: under,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(u.status, 400);
      assert.match((u.body.error as { message: string }).message, /^system_prompt/);
    });

    test('"__proto__" and "constructor.prototype" keys are refused by name, at any depth, however escaped', async () => {
      for (const raw of [
        '{"name":"a","__proto__":{"admin":true}}',
        '{"name":"a","voice":{"__proto__":{"x":1}}}',
        '{"name":"a","\\u005f_proto__":{}}',
        '{"name":"a","constructor":{"prototype":{"x":1}}}',
      ]) {
        const r = await request(p.url, 'POST', '/v2/agents', {
          key: p.apiKey,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 400, raw);
        assert.equal(errorCode(r), 'invalid_request');
        assert.match(
          (r.body.error as { message: string }).message,
          /^body: the key "(__proto__|constructor)"/,
          raw,
        );
      }
      const fine = await client(p.url, p.apiKey)('POST', '/v2/agents', {
        body: { name: 'constructor', first_message: '__proto__ is just text here' },
      });
      assert.equal(fine.status, 201, 'the words are fine as values');
    });

    test('invalid UTF-8 in a JSON body: 400, never replaced and stored', async () => {
      const api = client(p.url, p.apiKey);
      const before = ((await api('GET', '/v2/agents?limit=100')).body.data as unknown[]).length;
      for (const bytes of [
        [0xff, 0xfe],
        [0xc3], // a truncated two-byte sequence
        [0xed, 0xa0, 0x80], // an encoded surrogate
        [0xc0, 0xaf], // an overlong "/"
      ]) {
        const raw = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bytes), Buffer.from('"}')]);
        const r = await request(p.url, 'POST', '/v2/agents', {
          key: p.apiKey,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(r.status, 400, raw.toString('hex'));
        assert.equal((r.body.error as { message: string }).message, 'body: is not valid UTF-8');
      }
      assert.equal(((await api('GET', '/v2/agents?limit=100')).body.data as unknown[]).length, before);
    });

    test('JSON nested deeper than 64 levels: 400 naming the depth; 64 levels are parsed', async () => {
      const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const deep = await request(p.url, 'POST', '/v2/agents', {
        key: p.apiKey,
        rawBody: `{"name":"a","tools":${nested(100_000)}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(deep.status, 400);
      assert.match((deep.body.error as { message: string }).message, /^body: nested deeper than 64 levels/);
      const shallow = await request(p.url, 'POST', '/v2/agents', {
        key: p.apiKey,
        rawBody: `{"name":"a","tools":${nested(63)}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(shallow.status, 400);
      // Parsed, then validated: the tools' own check names the path.
      assert.equal(shallow.body.error, 'invalid_tools', JSON.stringify(shallow.body));
      const details = shallow.body.details as { path: string }[];
      assert.match(details[0]!.path, /^tools/, 'parsed, then validated');
    });

    test('an empty body with a JSON Content-Type is no body: optional bodies accept it, required ones name it', async () => {
      const empty = { rawBody: '', headers: { 'content-type': 'application/json' } };
      const api = client(p.url, p.apiKey);
      const agent = await api('POST', '/v2/agents', { body: { name: 'Draft', draft: true } });
      const publish = await api('POST', `/v2/agents/${agent.body.id}/publish`, empty);
      assert.equal(publish.status, 200, publish.text);
      const abort = await api('POST', '/v2/calls/call_01ARZ3NDEKTSV4RRFFQ69G5FAV/abort', empty);
      assert.equal(abort.status, 404, 'the body is accepted; the call is unknown');
      assert.equal(errorCode(abort), 'not_found');
      const create = await api('POST', '/v2/agents', empty);
      assert.equal(create.status, 400);
      assert.equal((create.body.error as { message: string }).message, 'body: is required (a JSON object)');
    });

    test('unicode is stored and returned as sent', async () => {
      const api = client(p.url, p.apiKey);
      const name = 'सहायक — સહાયક 👋';
      const r = await api('POST', '/v2/agents', { body: { name, first_message: 'नमस्ते {{name}}, कैसे हैं?' } });
      assert.equal(r.status, 201);
      assert.equal(r.body.name, name);
      assert.equal((await api('GET', `/v2/agents/${r.body.id}`)).body.first_message, 'नमस्ते {{name}}, कैसे हैं?');
    });

    test('unknown v2 routes and methods: 404 not_found in the envelope; outside v2 a plain 404', async () => {
      const api = client(p.url, p.apiKey);
      for (const [method, path] of [
        ['GET', '/v2/nothing'],
        ['POST', '/v2/wallet'],
      ] as const) {
        const r = await api(method, path);
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(errorCode(r), 'not_found');
      }
      const root = await api('GET', '/');
      assert.equal(root.status, 404);
      assert.equal(root.text, 'not found');
    });
  });

  describe(`request rate limit (${backend.name})`, () => {
    let p: TestPlatform;
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 10));
    before(async () => {
      p = await startTestPlatform(backend, { clock, env: { API_RATE_PER_SEC: '10', API_RATE_BURST: '20' } });
    });
    after(() => p.close());

    test('10/s with a burst of 20 per key: the 21st request is 429 with Retry-After, then it refills', async () => {
      const api = client(p.url, p.apiKey);
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) statuses.push((await api('GET', '/v2/wallet')).status);
      assert.deepEqual(statuses, [...Array(20).fill(200), 429]);
      const limited = await api('GET', '/v2/agents');
      assert.equal(errorCode(limited), 'rate_limited');
      assert.equal(limited.headers.get('retry-after'), '1');
      clock.advance(100);
      assert.equal((await api('GET', '/v2/wallet')).status, 200, 'one token after 100 ms at 10/s');
      assert.equal((await api('GET', '/v2/wallet')).status, 429);
      const { key } = await p.platform.store.apiKeys.create(p.workspaceId);
      assert.equal((await request(p.url, 'GET', '/v2/wallet', { key })).status, 200, 'limits are per key');
      clock.advance(2000);
      const after = await Promise.all(Array.from({ length: 20 }, () => api('GET', '/v2/wallet')));
      assert.ok(after.every((r) => r.status === 200));
    });
  });
}
