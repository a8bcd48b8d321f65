import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isId, newId } from './ids.ts';

test('ids are prefix + 26-char ULID and sort by creation, also within one millisecond', () => {
  const ids = Array.from({ length: 1000 }, () => newId('agent', 1_700_000_000_000));
  for (const id of ids) assert.ok(isId('agent', id), id);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  assert.match(newId('flowTest'), /^frf_[0-9A-Z]{26}$/);
  assert.ok(!isId('agent', 'call_01JAAAAAAAAAAAAAAAAAAAAAAA'));
  assert.ok(!isId('agent', 'agt_01JAAAAAAAAAAAAAAAAAAAAAAI'), 'I is not Crockford base32');
});
