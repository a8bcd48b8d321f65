/**
 * The HTTP layer's bounds, over raw sockets: oversized headers (431), a body that never finishes and headers
 * that never end (408), oversized bodies (413), unparsable HTTP (400) and requests that reach a closing server
 * (503). Each answers in the error envelope and closes the connection; nothing is held open longer than the
 * configured deadlines. The deadlines are set short here; their defaults are checked by the config suite.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../core/config.ts';
import { ERROR_CATALOGUE, type ErrorCode } from '../../core/errors.ts';
import { backends, request, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { exchange, RawConnection, type RawResponse } from '../support/raw-http.ts';

const [embedded] = await backends();

const SHORT_LIMITS = {
  API_HEADERS_TIMEOUT_MS: '300',
  API_REQUEST_TIMEOUT_MS: '600',
  API_ANSWER_TIMEOUT_MS: '1000',
  API_IDLE_TIMEOUT_MS: '5000',
  API_KEEP_ALIVE_TIMEOUT_MS: '300',
  BODY_LIMIT_BYTES: '4096',
};

/** Asserts the status and the envelope with `code`; returns the message. */
function assertEnvelope(response: RawResponse | undefined, status: number, code: string): string {
  assert.ok(response, 'a response arrived');
  assert.equal(response.status, status, response.text);
  assert.match(response.headers['content-type'] ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(response.body as object), ['error']);
  const error = (response.body as { error: { code: string; message: string } }).error;
  assert.equal(error.code, code, response.text);
  assert.equal(typeof error.message, 'string');
  return error.message;
}

describe('HTTP limits in the error envelope', () => {
  let p: TestPlatform;
  let authorization: string;
  before(async () => {
    p = await startTestPlatform(embedded!, { env: SHORT_LIMITS });
    authorization = `Authorization: Bearer ${p.apiKey}\r\n`;
  });
  after(() => p.close());

  test('a 20 KB header: 431 headers_too_large, connection closed', async () => {
    const [response, ...rest] = await exchange(
      p.url,
      `GET /v2/agents HTTP/1.1\r\nHost: api\r\n${authorization}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assertEnvelope(response, 431, 'headers_too_large');
    assert.equal(response?.headers.connection, 'close');
    assert.equal(rest.length, 0);
  });

  test('a URL longer than the header limit: 431 headers_too_large', async () => {
    const [response] = await exchange(
      p.url,
      `GET /v2/agents?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: api\r\n\r\n`,
    );
    assertEnvelope(response, 431, 'headers_too_large');
  });

  test('a body shorter than its Content-Length: 408 request_timeout at the request deadline', async () => {
    const [response] = await exchange(
      p.url,
      `POST /v2/agents HTTP/1.1\r\nHost: api\r\n${authorization}Content-Type: application/json\r\n` +
        'Content-Length: 100\r\n\r\n{"na',
    );
    assertEnvelope(response, 408, 'request_timeout');
  });

  test('headers that never end: 408 request_timeout at the header deadline', async () => {
    const [response] = await exchange(p.url, `GET /v2/agents HTTP/1.1\r\nHost: api\r\n${authorization}`);
    assertEnvelope(response, 408, 'request_timeout');
  });

  test('a connection that sends nothing: 408 request_timeout at the header deadline', async () => {
    const [response] = await exchange(p.url, '');
    assertEnvelope(response, 408, 'request_timeout');
  });

  test('an idle kept-alive connection is closed after its response', async () => {
    const connection = new RawConnection(p.url);
    await connection.connected;
    connection.write(`GET /v2/wallet HTTP/1.1\r\nHost: api\r\n${authorization}\r\n`);
    const [response] = await connection.responses(1);
    assert.equal(response?.status, 200);
    await connection.closed;
  });

  test('a body over the limit: 413 body_too_large, by Content-Length and by chunks', async () => {
    const big = JSON.stringify({ name: 'a', system_prompt: 'x'.repeat(5000) });
    const [declared] = await exchange(
      p.url,
      `POST /v2/agents HTTP/1.1\r\nHost: api\r\n${authorization}Content-Type: application/json\r\n` +
        `Content-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`,
    );
    assert.match(assertEnvelope(declared, 413, 'body_too_large'), /4096-byte limit/);

    const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
    const [chunked] = await exchange(
      p.url,
      `POST /v2/agents HTTP/1.1\r\nHost: api\r\n${authorization}Content-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk(big.slice(0, 3000))}${chunk(big.slice(3000))}0\r\n\r\n`,
    );
    assertEnvelope(chunked, 413, 'body_too_large');
  });

  test('unparsable HTTP: 400 invalid_request, connection closed', async () => {
    for (const garbage of [
      'garbage\r\n\r\n',
      'GET /v2/agents HTTP/9.9\r\n\r\n',
      'GET /v2/agents HTTP/1.1\r\nHost: api\r\nBad Header\r\n\r\n',
      'POST /v2/agents HTTP/1.1\r\nHost: api\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]) {
      const [response] = await exchange(p.url, garbage);
      assertEnvelope(response, 400, 'invalid_request');
    }
  });

  test('an Expect other than 100-continue: 400 invalid_request', async () => {
    const [response] = await exchange(
      p.url,
      `GET /v2/wallet HTTP/1.1\r\nHost: api\r\n${authorization}Expect: something-else\r\n\r\n`,
    );
    assert.match(assertEnvelope(response, 400, 'invalid_request'), /^Expect/);
  });

  test('every error status the API answers carries the envelope with a code of that status', async () => {
    const { key: revoked } = await p.platform.store.apiKeys.create(p.workspaceId);
    await p.platform.store.apiKeys.revoke(revoked);
    const key = p.apiKey;
    const json = { 'content-type': 'application/json' };
    const published = await request(p.url, 'POST', '/v2/agents', { key, body: { name: 'Live' } });
    const cases: Array<[number, Promise<Awaited<ReturnType<typeof request>>>]> = [
      [400, request(p.url, 'POST', '/v2/agents', { key, rawBody: '{', headers: json })],
      [
        400,
        request(p.url, 'POST', '/v2/agents', {
          key,
          rawBody: 'x',
          headers: { 'content-type': 'text/plain' },
        }),
      ],
      [400, request(p.url, 'GET', '/v2/agents?page=2', { key })],
      [401, request(p.url, 'GET', '/v2/agents', { key: null })],
      [403, request(p.url, 'GET', '/v2/agents', { key: revoked })],
      [404, request(p.url, 'GET', '/v2/agents/agt_01ARZ3NDEKTSV4RRFFQ69G5FAV', { key })],
      [404, request(p.url, 'DELETE', '/v2/wallet', { key })],
      [409, request(p.url, 'POST', `/v2/agents/${published.body.id}/publish`, { key })],
      [413, request(p.url, 'POST', '/v2/agents', { key, rawBody: `"${'x'.repeat(5000)}"`, headers: json })],
      // A node without speech engines (the api role alone) cannot transcribe in the request.
      [
        501,
        request(p.url, 'POST', '/v2/transcriptions/sync', {
          key,
          rawBody: 'RIFF',
          headers: { 'content-type': 'audio/wav' },
        }),
      ],
    ];
    for (const [status, pending] of cases) {
      const r = await pending;
      assert.equal(r.status, status, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      const error = (r.body as { error: { code: string; message: string } }).error;
      assert.equal(ERROR_CATALOGUE[error.code as ErrorCode]?.status, status, r.text);
      assert.equal(typeof error.message, 'string');
    }
  });

  test('the OpenAPI document lists the HTTP limits on every route and the body limit where there is a body', async () => {
    const doc = (await request(p.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>>;
    };
    const codesOf = (path: string, method: string) =>
      Object.values(doc.paths[path]?.[method]?.responses ?? {}).flatMap((r) => r['x-error-codes'] ?? []);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        for (const code of ['request_timeout', 'headers_too_large', 'service_unavailable'])
          assert.ok(codesOf(path, method).includes(code), `${method} ${path} lists ${code}`);
      }
    }
    assert.ok(codesOf('/v2/agents', 'post').includes('body_too_large'));
    assert.ok(!codesOf('/v2/agents', 'get').includes('body_too_large'));
  });
});

describe('a closing server', () => {
  test('a request that arrives while the server drains: 503 unavailable in the envelope, with Retry-After', async () => {
    const p = await startTestPlatform(embedded!, { env: { API_REQUEST_TIMEOUT_MS: '20000' } });
    const connection = new RawConnection(p.url);
    let closing: Promise<void> | undefined;
    try {
      await connection.connected;
      // The first request is in flight (its body unfinished) when the server starts closing; the second one,
      // on the same connection, arrives after.
      const body = JSON.stringify({ name: 'Draining' });
      connection.write(
        `POST /v2/agents HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer ${p.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      closing = p.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      connection.write(
        `${body.slice(5)}GET /v2/wallet HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer ${p.apiKey}\r\n\r\n`,
      );
      const [first, second] = await connection.responses(2);
      assert.ok(first && first.status < 600, 'the request in flight is answered');
      assertEnvelope(second, 503, 'service_unavailable');
      assert.equal(second?.headers['retry-after'], '1');
    } finally {
      connection.destroy();
      await (closing ?? p.close());
    }
  });
});

for (const backend of (await backends()).filter((b) => b.databaseUrl)) {
  test(`an answer that takes too long: 503 unavailable in the envelope at the answer deadline (${backend.name})`, async () => {
    const p = await startTestPlatform(backend, { env: SHORT_LIMITS });
    const { default: pg } = await import('pg');
    const locker = new pg.Client({ connectionString: backend.databaseUrl });
    await locker.connect();
    try {
      // Another session holds the agents table: listing agents waits for it far longer than the deadline.
      await locker.query('begin');
      await locker.query(`lock table "${p.databaseSchema}".agents in access exclusive mode`);
      const slow = await request(p.url, 'GET', '/v2/agents', { key: p.apiKey });
      assert.equal(slow.status, 503, slow.text);
      assert.equal((slow.body.error as { code: string }).code, 'service_unavailable');
      assert.match((slow.body.error as { message: string }).message, /within 1000 ms/);
      assert.equal(slow.headers.get('retry-after'), '1');
      await locker.query('rollback');
      assert.equal((await request(p.url, 'GET', '/v2/agents', { key: p.apiKey })).status, 200);
    } finally {
      await locker.end();
      await p.close();
    }
  });
}

test('timeouts default to 10 s for headers, 20 s for a request, 25 s for an answer, 30 s idle; none may exceed 30 s', () => {
  const limits = loadConfig({}).apiHttp;
  assert.deepEqual(
    { ...limits },
    {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 20_000,
      answerTimeoutMs: 25_000,
      idleTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxHeaderBytes: 16_384,
    },
  );
  assert.throws(() => loadConfig({ API_REQUEST_TIMEOUT_MS: '30001' }), /API_REQUEST_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ API_IDLE_TIMEOUT_MS: '60000' }), /API_IDLE_TIMEOUT_MS/);
  assert.throws(
    () => loadConfig({ API_HEADERS_TIMEOUT_MS: '9000', API_REQUEST_TIMEOUT_MS: '8000' }),
    /API_HEADERS_TIMEOUT_MS/,
  );
  assert.throws(
    () => loadConfig({ API_ANSWER_TIMEOUT_MS: '25000', API_IDLE_TIMEOUT_MS: '25000' }),
    /API_IDLE_TIMEOUT_MS/,
  );
  assert.throws(
    () => loadConfig({ API_REQUEST_TIMEOUT_MS: '20000', API_ANSWER_TIMEOUT_MS: '15000' }),
    /API_ANSWER_TIMEOUT_MS/,
  );
});
