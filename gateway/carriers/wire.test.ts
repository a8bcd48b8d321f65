import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Base64Decoder } from './wire.ts';

test('Base64Decoder decodes as Buffer.from does, payload after payload, longer and shorter', () => {
  const decoder = new Base64Decoder();
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2000 }), fc.boolean(), (bytes, unpadded) => {
      let text = Buffer.from(bytes).toString('base64');
      if (unpadded) text = text.replace(/=+$/, '');
      assert.deepEqual(Buffer.from(decoder.decode(text)!), Buffer.from(text, 'base64'));
    }),
  );
});

test('Base64Decoder is lenient where Buffer.from is, and refuses what is not text', () => {
  const decoder = new Base64Decoder();
  for (const text of ['', 'AAEC\nAwQF', 'AA-_', '****', 'QUJD==garbage'])
    assert.deepEqual(Buffer.from(decoder.decode(text)!), Buffer.from(text, 'base64'), text);
  assert.equal(decoder.decode(42), undefined);
  assert.equal(decoder.decode(undefined), undefined);
});
