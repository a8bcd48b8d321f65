/** PCM16 helpers: byte order and alignment, (de)interleaving, levels, float conversion. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  deinterleave,
  floatToPcm16,
  interleave,
  MIN_DBFS,
  measureLevel,
  pcm16FromBytes,
  pcm16ToBytes,
  pcm16ToFloat,
} from './pcm16.ts';
import { everyInt16, sine } from './testing/signals.ts';

describe('pcm16FromBytes / pcm16ToBytes', () => {
  test('reads little-endian samples', () => {
    assert.deepEqual(
      [...pcm16FromBytes(Uint8Array.of(0x01, 0x00, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f))],
      [1, -1, -32768, 32767],
    );
  });

  test('an aligned buffer is viewed, not copied', () => {
    const bytes = Buffer.from([0x34, 0x12, 0, 0]);
    const samples = pcm16FromBytes(bytes);
    assert.equal(samples.buffer, bytes.buffer);
    assert.equal(samples[0], 0x1234);
  });

  test('an odd byte offset is copied and reads the same values', () => {
    const backing = new Uint8Array(9);
    backing.set([0x34, 0x12, 0xcd, 0xab], 1);
    const samples = pcm16FromBytes(backing.subarray(1, 5));
    assert.notEqual(samples.buffer, backing.buffer);
    assert.deepEqual([...samples], [0x1234, 0xabcd - 0x10000]);
  });

  test('an odd byte count is refused', () => {
    assert.throws(() => pcm16FromBytes(new Uint8Array(3)), RangeError);
  });

  test('round trip for any samples and any byte offset', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -32768, max: 32767 })),
        fc.integer({ min: 0, max: 7 }),
        (values, at) => {
          const bytes = pcm16ToBytes(Int16Array.from(values));
          const shifted = new Uint8Array(bytes.length + at);
          shifted.set(bytes, at);
          assert.deepEqual([...pcm16FromBytes(shifted.subarray(at))], values);
          return values.length === 0 || bytes.readInt16LE(0) === values[0];
        },
      ),
    );
  });

  test('pcm16ToBytes writes little-endian over the samples memory', () => {
    const samples = Int16Array.of(0x0102, -2);
    const bytes = pcm16ToBytes(samples.subarray(1));
    assert.deepEqual([...bytes], [0xfe, 0xff]);
    assert.equal(bytes.buffer, samples.buffer);
  });
});

describe('interleave / deinterleave', () => {
  test('interleaves L R L R and pads the shorter channel with silence', () => {
    assert.deepEqual([...interleave(Int16Array.of(1, 2, 3), Int16Array.of(-1))], [1, -1, 2, 0, 3, 0]);
    assert.deepEqual([...interleave(new Int16Array(0), Int16Array.of(5, 6))], [0, 5, 0, 6]);
  });

  test('deinterleave(interleave(l, r)) gives back both channels, padded to the longer', () => {
    const channel = fc.array(fc.integer({ min: -32768, max: 32767 }), { maxLength: 300 });
    fc.assert(
      fc.property(channel, channel, (l, r) => {
        const [left, right] = deinterleave(interleave(Int16Array.from(l), Int16Array.from(r)));
        const n = Math.max(l.length, r.length);
        const pad = (a: number[]) => [...a, ...new Array<number>(n - a.length).fill(0)];
        assert.deepEqual([...left], pad(l));
        assert.deepEqual([...right], pad(r));
      }),
    );
  });
});

describe('measureLevel', () => {
  test('a full-scale sine is about -3 dBFS', () => {
    const level = measureLevel(sine(1000, 16000, 16000, 32767));
    assert.ok(Math.abs(level.rmsDbfs - -3.01) < 0.01, `${level.rmsDbfs}`);
    assert.equal(level.peak, 32767);
  });

  test('a -20 dBFS sine reads -23 dB rms, and counts no clipping', () => {
    const level = measureLevel(sine(440, 8000, 8000, 3277));
    assert.ok(Math.abs(level.rmsDbfs - -23.01) < 0.02, `${level.rmsDbfs}`);
    assert.equal(level.clippedSamples, 0);
  });

  test('silence and empty input read MIN_DBFS', () => {
    assert.deepEqual(measureLevel(new Int16Array(320)), { rmsDbfs: MIN_DBFS, peak: 0, clippedSamples: 0 });
    assert.equal(measureLevel(new Int16Array(0)).rmsDbfs, MIN_DBFS);
  });

  test('counts samples at either rail and the peak of -32768', () => {
    const level = measureLevel(Int16Array.of(0, 32767, -32768, 100, -32768));
    assert.equal(level.clippedSamples, 3);
    assert.equal(level.peak, 32768);
  });
});

describe('floatToPcm16 / pcm16ToFloat', () => {
  test('pcm16 -> float -> pcm16 is exact for every int16 value', () => {
    const all = everyInt16();
    assert.deepEqual(floatToPcm16(pcm16ToFloat(all)), all);
    assert.equal(pcm16ToFloat(Int16Array.of(-32768))[0], -1);
  });

  test('clips out-of-range floats and maps NaN to 0', () => {
    const out = floatToPcm16(Float32Array.of(1, -1, 2, -2, Number.NaN, 0.5, -0));
    assert.deepEqual([...out], [32767, -32768, 32767, -32768, 0, 16384, 0]);
  });

  test('any float lands within half a step of its scaled value, inside the range', () => {
    fc.assert(
      fc.property(fc.float({ min: -1, max: Math.fround(32767 / 32768), noNaN: true }), (x) => {
        const s = floatToPcm16(Float32Array.of(x))[0]!;
        return Math.abs(s - x * 32768) <= 0.5;
      }),
    );
  });
});
