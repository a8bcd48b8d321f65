import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStoreUnavailable } from './unavailable.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isStoreUnavailable', () => {
  test('a refused, dropped or shutting-down database is unavailable', () => {
    assert.equal(isStoreUnavailable(withCode('ECONNREFUSED')), true);
    assert.equal(isStoreUnavailable(new AggregateError([withCode('ECONNREFUSED')], 'connect failed')), true);
    assert.equal(isStoreUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(
      isStoreUnavailable(new Error('Client has encountered a connection error and is not queryable')),
      true,
    );
    assert.equal(
      isStoreUnavailable(withCode('57P01', 'terminating connection due to administrator command')),
      true,
    );
    assert.equal(isStoreUnavailable(withCode('08006')), true);
    assert.equal(isStoreUnavailable(new Error('wrapped', { cause: withCode('ECONNRESET') })), true);
  });

  test('a fault of the query or the code is not', () => {
    assert.equal(isStoreUnavailable(withCode('23505', 'duplicate key value')), false);
    assert.equal(isStoreUnavailable(withCode('42P01', 'relation does not exist')), false);
    assert.equal(isStoreUnavailable(new TypeError('x is undefined')), false);
    assert.equal(isStoreUnavailable('ECONNREFUSED'), false);
    assert.equal(isStoreUnavailable(undefined), false);
  });
});
