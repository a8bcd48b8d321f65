import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../core/errors.ts';
import type { IdempotencyRecord, IdempotencyRepo } from '../../core/store/types.ts';
import {
  canonicalJson,
  IDEMPOTENCY_WINDOW_MS,
  idempotencyKeyOf,
  type KeepResponse,
  requestHash,
  respondOnce,
} from './idempotency.ts';

/** The repository's contract in memory: one claim per key, abandon deletes only in-flight claims. */
class MemoryIdempotency implements IdempotencyRepo {
  readonly records = new Map<string, IdempotencyRecord>();
  ttls: number[] = [];

  async begin(input: { workspaceId: string; key: string; requestHash: string; ttlMs: number }) {
    this.ttls.push(input.ttlMs);
    const id = `${input.workspaceId}/${input.key}`;
    const existing = this.records.get(id);
    if (existing) return { claimed: false as const, record: { ...existing } };
    this.records.set(id, {
      workspaceId: input.workspaceId,
      key: input.key,
      requestHash: input.requestHash,
      status: 'in_flight',
      responseStatus: null,
      responseBody: null,
      createdAt: 0,
      expiresAt: input.ttlMs,
    });
    return { claimed: true as const };
  }

  async complete(workspaceId: string, key: string, responseStatus: number, responseBody: string) {
    const record = this.records.get(`${workspaceId}/${key}`);
    if (record) Object.assign(record, { status: 'done', responseStatus, responseBody });
  }

  async abandon(workspaceId: string, key: string) {
    const id = `${workspaceId}/${key}`;
    if (this.records.get(id)?.status === 'in_flight') this.records.delete(id);
  }
}

const claim = (hash = 'h1') => ({ workspaceId: 'ws_1', key: 'k1', requestHash: hash });

async function rejects(promise: Promise<unknown>, code: string, pattern?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.code, code);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

describe('Idempotency-Key header', () => {
  test('absent is undefined; 1 to 255 visible ASCII characters are accepted', () => {
    assert.equal(idempotencyKeyOf({}), undefined);
    assert.equal(idempotencyKeyOf({ 'idempotency-key': 'order-42:retry' }), 'order-42:retry');
    assert.equal(idempotencyKeyOf({ 'idempotency-key': 'x'.repeat(255) }), 'x'.repeat(255));
  });

  test('empty, too long, spaces, control or non-ASCII characters are 400 naming the header', () => {
    for (const value of ['', 'x'.repeat(256), 'has space', 'tab\there', 'ключ', ['a', 'b']]) {
      assert.throws(
        () => idempotencyKeyOf({ 'idempotency-key': value }),
        (error: unknown) =>
          error instanceof ApiError &&
          error.code === 'invalid_request' &&
          /Idempotency-Key/.test(error.message),
        String(value),
      );
    }
  });
});

describe('request hash', () => {
  test('key order does not matter; method, path and values do', () => {
    const body = { agent_id: 'agt_1', to: '+919876543210', variables: { b: 1, a: [2, { d: 1, c: 0 }] } };
    const reordered = { variables: { a: [2, { c: 0, d: 1 }], b: 1 }, to: '+919876543210', agent_id: 'agt_1' };
    assert.equal(canonicalJson(body), canonicalJson(reordered));
    const hash = requestHash({ method: 'POST', path: '/v2/calls', body });
    assert.equal(hash, requestHash({ method: 'post', path: '/v2/calls', body: reordered }));
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.notEqual(
      hash,
      requestHash({ method: 'POST', path: '/v2/calls', body: { ...body, to: '+919876543211' } }),
    );
    assert.notEqual(hash, requestHash({ method: 'POST', path: '/v2/other', body }));
    assert.notEqual(hash, requestHash({ method: 'PUT', path: '/v2/calls', body }));
  });
});

describe('respondOnce', () => {
  test('the first request runs and is stored; a repeat replays the exact text without running', async () => {
    const repo = new MemoryIdempotency();
    let runs = 0;
    const produce = async () => ({ status: 202, body: { id: `call_${++runs}`, status: 'queued' } });
    const first = await respondOnce(repo, claim(), produce);
    assert.deepEqual(first, { status: 202, text: '{"id":"call_1","status":"queued"}', replayed: false });
    assert.deepEqual(repo.ttls, [IDEMPOTENCY_WINDOW_MS]);
    const second = await respondOnce(repo, claim(), produce);
    assert.deepEqual(second, { ...first, replayed: true });
    assert.equal(runs, 1);
  });

  test('a duplicate while the first still runs is 409 duplicate_call', async () => {
    const repo = new MemoryIdempotency();
    let release: () => void = () => {};
    const slow = respondOnce(repo, claim(), async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { status: 202, body: { id: 'call_1' } };
    });
    await rejects(
      respondOnce(repo, claim(), async () => assert.fail('must not run')),
      'duplicate_call',
    );
    release();
    assert.equal((await slow).status, 202);
  });

  test('another request under a used key is 400 naming the header, in flight or done', async () => {
    const repo = new MemoryIdempotency();
    await respondOnce(repo, claim('h1'), async () => ({ status: 202, body: {} }));
    await rejects(
      respondOnce(repo, claim('h2'), async () => assert.fail('must not run')),
      'invalid_request',
      /^Idempotency-Key: reused with a different request/,
    );
  });

  test('a failure gives the key up, so the same key works once the cause is gone', async () => {
    const repo = new MemoryIdempotency();
    await rejects(
      respondOnce(repo, claim(), async () => {
        throw new ApiError('insufficient_balance', 'top up');
      }),
      'insufficient_balance',
    );
    assert.equal(repo.records.size, 0);
    const retried = await respondOnce(repo, claim(), async () => ({ status: 202, body: { id: 'call_2' } }));
    assert.equal(retried.replayed, false);
    assert.equal(retried.text, '{"id":"call_2"}');
  });

  test('a response kept with the effect survives a failure after it: the retry replays it, nothing runs twice', async () => {
    const repo = new MemoryIdempotency();
    let runs = 0;
    // The effect and its kept response commit, then the commit's acknowledgement is lost.
    const lostAck = async (keep: KeepResponse) => {
      runs++;
      await keep(repo, { status: 202, body: { id: 'call_1', status: 'queued' } });
      throw new Error('Connection terminated unexpectedly');
    };
    await assert.rejects(respondOnce(repo, claim(), lostAck), /Connection terminated/);
    const retried = await respondOnce(repo, claim(), async () => assert.fail('must not run again'));
    assert.deepEqual(retried, { status: 202, text: '{"id":"call_1","status":"queued"}', replayed: true });
    assert.equal(runs, 1);
  });

  test('a claim that could not be given up is given up once the store answers again', async () => {
    const repo = new MemoryIdempotency();
    const abandon = repo.abandon.bind(repo);
    let failures = 2;
    repo.abandon = async (workspaceId, key) => {
      if (failures-- > 0) throw new Error('store down');
      await abandon(workspaceId, key);
    };
    await rejects(
      respondOnce(repo, claim(), async () => {
        throw new ApiError('not_found', 'agent not found');
      }),
      'not_found',
    );
    await rejects(
      respondOnce(repo, claim(), async () => assert.fail('must not run')),
      'duplicate_call',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const retried = await respondOnce(repo, claim(), async () => ({ status: 202, body: { id: 'call_2' } }));
    assert.equal(retried.text, '{"id":"call_2"}');
  });

  test('when giving the key up fails too, the request still answers with its own error', async () => {
    const repo = new MemoryIdempotency();
    repo.abandon = async () => {
      throw new Error('store down');
    };
    await rejects(
      respondOnce(repo, claim(), async () => {
        throw new ApiError('not_found', 'agent not found');
      }),
      'not_found',
    );
  });
});
