import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { samplePeak } from './peak.ts';

const reference = (samples: Int16Array): number =>
  samples.reduce((peak, s) => Math.max(peak, Math.abs(s)), 0);

test('samplePeak is the largest magnitude, -32768 included, for any length', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.integer({ min: -32768, max: 32767 }), fc.constantFrom(-32768, 32767, -1, 0)), {
        maxLength: 700,
      }),
      (values) => {
        const samples = Int16Array.from(values);
        assert.equal(samplePeak(samples), reference(samples));
      },
    ),
  );
  assert.equal(samplePeak(new Int16Array(0)), 0);
  assert.equal(samplePeak(Int16Array.of(-32768)), 32768);
  // A longer run than the kernel takes at once, the peak in its last part; then a short one after it.
  const long = new Int16Array(100_000);
  long[99_999] = -1234;
  long[5] = 1000;
  assert.equal(samplePeak(long), 1234);
  assert.equal(samplePeak(Int16Array.of(3, -2)), 3);
  // A view into a larger array: only its own samples count.
  const whole = Int16Array.of(30_000, 1, -7, 2, 30_000);
  assert.equal(samplePeak(whole.subarray(1, 4)), 7);
});
