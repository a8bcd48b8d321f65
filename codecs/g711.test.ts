/**
 * G.711 against SoX: every one of the 65,536 PCM16 inputs and every one of the 256 codes of both laws, plus
 * generated signals (sweep, noise, full scale, silence); then error bounds and code round trips.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from './g711.ts';
import { pcm16FromBytes, pcm16ToBytes } from './pcm16.ts';
import { concat, everyInt16, noise, sweep } from './testing/signals.ts';
import { rawPcm16, sox, soxSkip } from './testing/sox.ts';

const LAWS = [
  { name: 'mu-law', soxEncoding: 'u-law', encode: mulawEncode, decode: mulawDecode },
  { name: 'A-law', soxEncoding: 'a-law', encode: alawEncode, decode: alawDecode },
] as const;

const ALL_CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

function generatedSignals(): Int16Array {
  const fullScale = Int16Array.from({ length: 800 }, (_, i) => (Math.floor(i / 20) % 2 ? 32767 : -32768));
  return concat([sweep(50, 3950, 8000, 16000, 30000), noise(16000), fullScale, new Int16Array(800)]);
}

for (const law of LAWS) {
  describe(`${law.name} against sox`, () => {
    test('encodes every PCM16 value exactly as sox does', { skip: soxSkip }, () => {
      const input = everyInt16();
      const expected = sox(
        [...rawPcm16(8000), '-', '-t', 'raw', '-e', law.soxEncoding, '-'],
        pcm16ToBytes(input),
      );
      const ours = law.encode(input);
      const mismatches = [...ours].filter((code, i) => code !== expected[i]).length;
      assert.equal(expected.length, 65536);
      assert.equal(mismatches, 0, `${mismatches} of 65536 codes differ from sox`);
    });

    test('encodes a sweep, noise, full-scale square and silence exactly as sox does', {
      skip: soxSkip,
    }, () => {
      const input = generatedSignals();
      const expected = sox(
        [...rawPcm16(8000), '-', '-t', 'raw', '-e', law.soxEncoding, '-'],
        pcm16ToBytes(input),
      );
      assert.deepEqual(law.encode(input), new Uint8Array(expected));
    });

    test('decodes each of the 256 codes exactly as sox does', { skip: soxSkip }, () => {
      const args = ['-t', 'raw', '-r', '8000', '-e', law.soxEncoding, '-b', '8', '-c', '1', '-', '-t', 'raw'];
      const expected = pcm16FromBytes(sox([...args, '-e', 'signed', '-b', '16', '-L', '-'], ALL_CODES));
      assert.deepEqual(law.decode(ALL_CODES), Int16Array.from(expected));
    });
  });
}

describe('G.711 reference points', () => {
  test('mu-law: 0xff and 0x7f are +0 and -0, 0x80/0x00 are +-32124', () => {
    assert.deepEqual([...mulawDecode(Uint8Array.of(0xff, 0x7f, 0x80, 0x00))], [0, 0, 32124, -32124]);
    assert.deepEqual([...mulawEncode(Int16Array.of(0, 32767, -32768))], [0xff, 0x80, 0x00]);
  });

  test('A-law: 0xd5/0x55 are +-8, 0xaa/0x2a are +-32256', () => {
    assert.deepEqual([...alawDecode(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a))], [8, -8, 32256, -32256]);
    assert.deepEqual([...alawEncode(Int16Array.of(0, 32767, -32768))], [0xd5, 0xaa, 0x2a]);
  });

  test('writes into a given output and refuses one that is too small', () => {
    const out = new Int16Array(4);
    assert.equal(mulawDecode(Uint8Array.of(0xff, 0x80), out), out);
    assert.deepEqual([...out], [0, 32124, 0, 0]);
    assert.throws(() => alawEncode(new Int16Array(3), new Uint8Array(2)), RangeError);
  });
});

/**
 * Quantisation error: rounding to 14 (mu) or 13 (A) bits costs up to 2 or 4; the segment's step at 16 bits is
 * 2^(segment + 3) (A-law's first two segments share the step 16), so the error is at most half a step plus
 * that. Past the top decision level a sample clips: it must then decode to the rail of its sign.
 */
function withinBound(law: (typeof LAWS)[number], x: number, code: number, y: number): boolean {
  const rail = law.name === 'mu-law' ? 32124 : 32256;
  if (Math.abs(y) === rail && Math.sign(x) === Math.sign(y) && Math.abs(x) >= rail) return true;
  const segment = law.name === 'mu-law' ? (~code >> 4) & 7 : Math.max(((code ^ 0x55) >> 4) & 7, 1);
  const rounding = law.name === 'mu-law' ? 2 : 4;
  return Math.abs(x - y) <= 2 ** (segment + 2) + rounding;
}

for (const law of LAWS) {
  describe(`${law.name} properties`, () => {
    test('decode(encode(x)) is within half a quantisation step of x, or at the rail when x clips', () => {
      fc.assert(
        fc.property(fc.integer({ min: -32768, max: 32767 }), (x) => {
          const code = law.encode(Int16Array.of(x))[0]!;
          const y = law.decode(Uint8Array.of(code))[0]!;
          return withinBound(law, x, code, y);
        }),
        { numRuns: 5000 },
      );
      // and exhaustively, since it is cheap
      const input = everyInt16();
      const codes = law.encode(input);
      const back = law.decode(codes);
      for (let i = 0; i < input.length; i++) {
        assert.ok(withinBound(law, input[i]!, codes[i]!, back[i]!), `x=${input[i]}`);
      }
    });

    test('the encoder is monotonic: a larger sample never decodes smaller', () => {
      const back = law.decode(law.encode(everyInt16()));
      for (let i = 1; i < back.length; i++) assert.ok(back[i]! >= back[i - 1]!, `at ${i - 32768}`);
    });

    // mu-law has two zero codes, +0 (0xff) and -0 (0x7f); both decode to 0, which encodes to 0xff, so 0x7f is
    // the one code that does not come back. A-law has no zero code and every code round-trips.
    const exceptions = law.name === 'mu-law' ? [0x7f] : [];
    test(`encode(decode(code)) == code for every code${exceptions.length ? ' but -0 (0x7f)' : ''}`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 255 }), (code) => {
          const again = law.encode(law.decode(Uint8Array.of(code)))[0];
          return exceptions.includes(code) ? again === 0xff : again === code;
        }),
      );
      const again = law.encode(law.decode(ALL_CODES));
      const differing = [...ALL_CODES].filter((code) => again[code] !== code);
      assert.deepEqual(differing, exceptions);
    });
  });
}
