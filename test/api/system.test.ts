/** The contract document, the voice catalogue, health and metrics. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../../core/errors.ts';
import {
  backends,
  client,
  errorCode,
  request,
  startTestPlatform,
  type TestPlatform,
} from '../support/platform.ts';

const SPEC_LANGUAGES = [
  'hi-IN',
  'en-IN',
  'gu-IN',
  'mr-IN',
  'pa-IN',
  'bn-IN',
  'ta-IN',
  'te-IN',
  'kn-IN',
  'ml-IN',
];

const [embedded] = await backends();

describe('contract, voices, health, metrics', () => {
  let p: TestPlatform;
  before(async () => {
    p = await startTestPlatform(embedded!);
  });
  after(() => p.close());

  test('GET /openapi.json is OpenAPI 3.1 with the version label, every route and exactly the error catalogue', async () => {
    const r = await request(p.url, 'GET', '/openapi.json');
    assert.equal(r.status, 200);
    const doc = r.body as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>>;
      components: { schemas: { ErrorCode: { enum: string[] } } };
    };
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '2026-10-15.analysis-templates');
    assert.deepEqual([...doc.components.schemas.ErrorCode.enum].sort(), Object.keys(ERROR_CATALOGUE).sort());
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const expected of [
      'POST /v2/agents',
      'GET /v2/agents',
      'GET /v2/agents/{id}',
      'PATCH /v2/agents/{id}',
      'DELETE /v2/agents/{id}',
      'GET /v2/agents/{id}/flow',
      'PUT /v2/agents/{id}/flow',
      'GET /v2/agents/{id}/revisions',
      'GET /v2/agents/{id}/revisions/{revision}',
      'POST /v2/agents/{id}/revisions/{revision}/rollback',
      'POST /v2/agents/{id}/publish',
      'GET /v2/voices',
      'GET /v2/wallet',
      'GET /v2/wallet/transactions',
    ]) {
      assert.ok(operations.includes(expected), `missing ${expected}`);
    }
    const served = new Set<string>();
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) {
        for (const response of Object.values(op.responses))
          for (const c of response['x-error-codes'] ?? []) served.add(c);
      }
    }
    for (const code of served) assert.ok(code in ERROR_CATALOGUE, code);
    for (const code of [
      'unauthorized',
      'forbidden',
      'rate_limited',
      'invalid_request',
      'not_found',
      'conflict',
      'invalid_flow',
      'invalid_tools',
    ]) {
      assert.ok(served.has(code), `no route documents ${code}`);
    }
  });

  test('every route the server answers is in the document', async () => {
    const doc = (await request(p.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const api = client(p.url, p.apiKey);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const concrete = path.replace('{id}', 'agt_01JAAAAAAAAAAAAAAAAAAAAAAA').replace('{revision}', '1');
        const r = await api(
          method.toUpperCase(),
          concrete,
          method === 'get' || method === 'delete' ? {} : { body: {} },
        );
        assert.notEqual(r.status, 405, `${method} ${path}`);
        if (r.status === 501) assert.equal(errorCode(r), 'not_implemented', `${method} ${path}`);
        else assert.ok(r.status < 500, `${method} ${path} answered ${r.status}`);
      }
    }
  });

  test('the transcription routes answer after authentication, in the envelope', async () => {
    const api = client(p.url, p.apiKey);
    const listed = await api('GET', '/v2/transcriptions');
    assert.equal(listed.status, 200, listed.text);
    const refused = await api('POST', '/v2/transcriptions', { body: {} });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(errorCode(refused), 'invalid_request');
    for (const method of ['GET', 'POST'] as const)
      assert.equal((await request(p.url, method, '/v2/transcriptions')).status, 401);
  });

  test('v2 is one plugin: its errors and unknown routes answer in its envelope, a path outside it a plain 404', async () => {
    const api = client(p.url, p.apiKey);
    const unauthenticated = await request(p.url, 'GET', '/v2/calls');
    assert.equal(unauthenticated.status, 401);
    assert.equal(errorCode(unauthenticated), 'unauthorized');
    const invalid = await api('GET', '/v2/calls?limit=0');
    assert.equal(invalid.status, 400);
    assert.equal(errorCode(invalid), 'invalid_request');
    const unknownV2 = await api('GET', '/v2/no-such-resource');
    assert.equal(unknownV2.status, 404);
    assert.equal(errorCode(unknownV2), 'not_found');

    for (const path of ['/no-such-product', '/v1/no-such-resource', '/v2x/calls']) {
      const outside = await api('GET', path);
      assert.equal(outside.status, 404, path);
      assert.match(outside.headers.get('content-type') ?? '', /^text\/plain/, path);
      assert.equal(outside.text, 'not found', path);
    }
  });
  test('GET /v2/voices lists local voices for each of the ten languages of live STT', async () => {
    const api = client(p.url, p.apiKey);
    const r = await api<{
      data: Array<{ id: string; languages: string[]; engine: string; gender: string; name: string }>;
    }>('GET', '/v2/voices');
    assert.equal(r.status, 200);
    for (const language of SPEC_LANGUAGES) {
      assert.ok(
        r.body.data.some((v) => v.engine === 'espeak' && v.languages.includes(language)),
        language,
      );
    }
    const hindi = await api<{ data: Array<{ languages: string[] }> }>(
      'GET',
      '/v2/voices?language=hi-IN&gender=female',
    );
    assert.ok(hindi.body.data.length > 0);
    assert.ok(hindi.body.data.every((v) => v.languages.includes('hi-IN')));
    assert.equal((await api('GET', '/v2/voices?gender=robot')).status, 400);
    assert.equal((await request(p.url, 'GET', '/v2/voices')).status, 401);
  });

  test('GET /healthz reports the store and coordinator', async () => {
    const r = await request(p.url, 'GET', '/healthz');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
    assert.equal((r.body.store as { dialect: string }).dialect, 'sqlite');
  });

  test('GET /metrics exposes request counters by route template', async () => {
    await client(p.url, p.apiKey)('GET', '/v2/wallet');
    const r = await request(p.url, 'GET', '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.text, /api_http_requests_total\{method="GET",route="\/v2\/wallet",status="200"\} \d+/);
    assert.match(r.text, /process_cpu_user_seconds_total/);
    assert.ok(!r.text.includes(p.apiKey));
  });
});
