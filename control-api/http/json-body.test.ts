/** JSON request bodies: strict UTF-8, bounded nesting, no prototype keys; what each refusal says. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isApiError } from '../../core/errors.ts';
import { MAX_JSON_DEPTH, nestingDepth, parseJsonBody } from './json-body.ts';

function refusal(raw: Buffer | string): string {
  try {
    parseJsonBody(Buffer.isBuffer(raw) ? raw : Buffer.from(raw));
  } catch (error) {
    assert.ok(isApiError(error), String(error));
    assert.equal(error.code, 'invalid_request');
    return error.message;
  }
  assert.fail(`accepted ${String(raw)}`);
}

describe('nestingDepth', () => {
  test('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    assert.equal(nestingDepth('1'), 0);
    assert.equal(nestingDepth('{}'), 1);
    assert.equal(nestingDepth('{"a":[1,{"b":[]}],"c":{}}'), 4);
    assert.equal(nestingDepth('{"a":"[[[[{{{{"}'), 1);
    assert.equal(nestingDepth('{"a":"\\"[[[","b":"\\\\","c":[[]]}'), 3);
    assert.equal(nestingDepth('["unterminated [[['), 1);
  });

  test('stops counting once past the bound', () => {
    assert.equal(nestingDepth('['.repeat(1_000_000), 10), 11);
  });
});

describe('parseJsonBody', () => {
  test('parses JSON; an empty body is undefined; a byte order mark is dropped', () => {
    assert.deepEqual(parseJsonBody(Buffer.from('{"name":"सहायक 👋","n":[1,2]}')), {
      name: 'सहायक 👋',
      n: [1, 2],
    });
    assert.equal(parseJsonBody(Buffer.alloc(0)), undefined);
    assert.deepEqual(parseJsonBody(Buffer.from('\ufeff{"a":1}')), { a: 1 });
    assert.deepEqual(parseJsonBody(Buffer.from('{"text":"constructor.prototype \\u0041"}')), {
      text: 'constructor.prototype A',
    });
  });

  test('refuses malformed JSON, invalid UTF-8, deep nesting and prototype keys, saying which', () => {
    assert.equal(refusal('{"a":'), 'body: malformed JSON');
    assert.equal(refusal(Buffer.from([0x22, 0xe2, 0x82, 0x22])), 'body: is not valid UTF-8');
    assert.equal(
      refusal(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`),
      'body: nested deeper than 64 levels',
    );
    const deepest = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    assert.equal(JSON.stringify(parseJsonBody(Buffer.from(deepest))), deepest);
    assert.equal(refusal('{"__proto__":{"x":1}}'), 'body: the key "__proto__" is refused');
    assert.equal(refusal('[{"a":{"\\u005f\\u005fproto__":1}}]'), 'body: the key "__proto__" is refused');
    assert.equal(
      refusal('{"constructor":{"prototype":{}}}'),
      'body: the key "constructor" holding "prototype" is refused',
    );
    assert.deepEqual(parseJsonBody(Buffer.from('{"constructor":"x","prototype":1}')), {
      constructor: 'x',
      prototype: 1,
    });
  });
});
