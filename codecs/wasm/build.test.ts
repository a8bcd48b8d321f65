import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileKernel, kernels } from './build.ts';

test('every WebAssembly kernel module holds what its .wat source compiles to', async () => {
  const found = kernels();
  assert.ok(found.length > 0);
  for (const kernel of found) {
    const compiled = await compileKernel(readFileSync(kernel.source, 'utf8'), kernel.name);
    assert.equal(readFileSync(kernel.target, 'utf8'), compiled, `${kernel.name}: run npm run build:wasm`);
  }
});
