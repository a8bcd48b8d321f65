import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrefixView } from './prefix-view.ts';

test("PrefixView gives the buffer's first elements, one view object while the length stays", () => {
  const buffer = Int16Array.of(1, 2, 3, 4, 5);
  const prefix = new PrefixView(buffer);
  const three = prefix.of(3);
  assert.deepEqual([...three], [1, 2, 3]);
  assert.equal(prefix.of(3), three);
  buffer[0] = 9;
  assert.deepEqual([...prefix.of(3)], [9, 2, 3]);
  assert.deepEqual([...prefix.of(5)], [9, 2, 3, 4, 5]);
  assert.deepEqual([...prefix.of(0)], []);
  assert.notEqual(prefix.of(3), three);
  const bytes = new PrefixView(Buffer.from('abcdef'));
  assert.equal(bytes.of(2).toString(), 'ab');
  assert.ok(Buffer.isBuffer(bytes.of(4)));
});
