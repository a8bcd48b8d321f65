/**
 * Resampler: accuracy against analytic tones at the target rate (delay compensated), alias rejection when
 * downsampling, agreement with `sox rate -v`, chunking invariance, frame-edge continuity and the length/delay
 * contract, for every ordered pair of the rates we carry.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pcm16FromBytes, pcm16ToBytes } from './pcm16.ts';
import { type ResampleQuality, Resampler } from './resample.ts';
import { HALF_BAND_BITS, HALF_BAND_STOPBAND_EDGE, HALF_BAND_TAPS } from './resample-halfband.ts';
import { designHalfBand, quantizeHalfBand, stopbandPeak } from './resample-halfband-design.ts';
import { concat, idealSine, noise, powerDb, sine, snrDb, toPcm16 } from './testing/signals.ts';
import { rawPcm16, sox, soxSkip } from './testing/sox.ts';

const RATES = [8000, 16000, 22050, 24000, 48000] as const;
const PAIRS = RATES.flatMap((from) => RATES.filter((to) => to !== from).map((to) => [from, to] as const));
const AMPLITUDE = 16000;

/** Tones are placed relative to the lower of the two Nyquist frequencies (the band both rates can carry). */
const QUALITY_CASES: { quality: ResampleQuality; pass: number[]; stop: number[]; minDb: number }[] = [
  // 'voice' passes 0.85 of Nyquist (3.4 kHz at 8 kHz: the telephone band) and rejects from 1.15 (4.6 kHz).
  { quality: 'voice', pass: [0.05, 0.3, 0.6, 0.85], stop: [1.15, 1.5, 1.9], minDb: 60 },
  { quality: 'high', pass: [0.05, 0.5, 0.9], stop: [1.1, 1.5], minDb: 80 },
];

/** Output SNR against the ideal tone at the target rate, skipping the filter's run-in (2 x delay). */
function toneSnr(from: number, to: number, freq: number, quality: ResampleQuality): number {
  const resampler = new Resampler(from, to, { quality });
  const output = resampler.process(sine(freq, from, Math.round(from / 4), AMPLITUDE));
  const ideal = idealSine(freq, to, output.length, AMPLITUDE, resampler.delaySamples);
  return snrDb(ideal, output, 2 * resampler.delaySamples + 4, output.length);
}

for (const { quality, pass, stop, minDb } of QUALITY_CASES) {
  describe(`Resampler '${quality}' accuracy`, () => {
    for (const [from, to] of PAIRS) {
      const nyquist = Math.min(from, to) / 2;
      test(`${from} -> ${to}: tones up to ${pass.at(-1)} of Nyquist have SNR >= ${minDb} dB`, (t) => {
        const figures = pass.map((fraction) => {
          const freq = fraction * nyquist;
          const snr = toneSnr(from, to, freq, quality);
          assert.ok(snr >= minDb, `${freq} Hz: SNR ${snr.toFixed(1)} dB`);
          return `${freq.toFixed(0)} Hz ${snr.toFixed(1)} dB`;
        });
        t.diagnostic(`SNR vs ideal: ${figures.join(', ')}`);
      });

      const aliasTones = stop
        .map((fraction) => fraction * nyquist)
        .filter((freq) => freq < 0.95 * (from / 2));
      if (to > from || aliasTones.length === 0) continue; // 24000 -> 22050: no room above the new Nyquist
      test(`${from} -> ${to}: tones above the new Nyquist are rejected by >= ${minDb} dB`, (t) => {
        const figures: string[] = [];
        for (const freq of aliasTones) {
          const resampler = new Resampler(from, to, { quality });
          const output = resampler.process(sine(freq, from, Math.round(from / 4), AMPLITUDE));
          const level = powerDb(output, 2 * resampler.delaySamples + 4, output.length, AMPLITUDE);
          assert.ok(level <= -minDb, `${freq} Hz leaks at ${level.toFixed(1)} dB`);
          figures.push(`${freq.toFixed(0)} Hz ${level.toFixed(1)} dB`);
        }
        t.diagnostic(`alias level: ${figures.join(', ')}`);
      });
    }
  });
}

describe('Resampler against sox rate -v', () => {
  const cases = [
    [8000, 16000],
    [16000, 8000],
    [16000, 48000],
    [48000, 16000],
    [24000, 16000],
    [22050, 16000],
    [16000, 22050],
  ] as const;
  for (const [from, to] of cases) {
    test(`${from} -> ${to}: ours and sox's agree to >= 60 dB on in-band tones`, { skip: soxSkip }, (t) => {
      const nyquist = Math.min(from, to) / 2;
      const length = Math.round(from / 2);
      const tones = [0.05, 0.2, 0.45, 0.7, 0.8].map((f) => idealSine(f * nyquist, from, length, 5000));
      const input = toPcm16(tones.reduce((sum, tone) => sum.map((v, i) => v + tone[i]!)));
      const theirs = pcm16FromBytes(
        sox(
          [
            ...rawPcm16(from),
            '-',
            '-t',
            'raw',
            '-e',
            'signed',
            '-b',
            '16',
            '-L',
            '-',
            'rate',
            '-v',
            String(to),
          ],
          pcm16ToBytes(input),
        ),
      );
      const resampler = new Resampler(from, to);
      const ours = concat([resampler.process(input), resampler.flush()]).subarray(resampler.delaySamples);
      const margin = Math.round(to / 50); // 20 ms at each end: both filters' onset transients
      const snr = snrDb(theirs, ours, margin, Math.min(theirs.length, ours.length) - margin);
      t.diagnostic(`SNR between ours and sox: ${snr.toFixed(1)} dB`);
      assert.ok(snr >= 60, `SNR ours vs sox ${snr.toFixed(1)} dB`);
    });
  }
});

describe('Resampler streaming', () => {
  test('any chunking gives exactly the output of the whole signal, flush included', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PAIRS),
        fc.constantFrom<ResampleQuality>('voice', 'high'),
        fc.integer({ min: 0, max: 2000 }),
        fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        ([from, to], quality, length, sizes, seed) => {
          const input = noise(length, seed);
          const whole = new Resampler(from, to, { quality });
          const expected = concat([whole.process(input), whole.flush()]);
          const chunked = new Resampler(from, to, { quality });
          const parts: Int16Array[] = [];
          for (let at = 0, i = 0; at < length; i++) {
            // Empty chunks are part of the test; every other one of them moves on by a sample so it ends.
            const size = sizes[i % sizes.length]!;
            const n = Math.min(size === 0 && i % 2 === 1 ? 1 : size, length - at);
            if (i % 2 === 0) {
              parts.push(chunked.process(input.subarray(at, at + n)));
            } else {
              const out = new Int16Array(chunked.outputLength(n) + 3);
              parts.push(out.slice(0, chunked.processInto(input.subarray(at, at + n), out)));
            }
            at += n;
            if (i > 10_000) throw new Error('no progress');
          }
          parts.push(chunked.flush());
          assert.deepEqual(concat(parts), expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  for (const [from, to] of [
    [8000, 16000],
    [16000, 8000],
    [16000, 48000],
    [22050, 16000],
  ] as const) {
    test(`${from} -> ${to} in 20 ms frames: no click at frame edges`, () => {
      const resampler = new Resampler(from, to);
      const frame = from / 50;
      const input = sine(1000, from, frame * 50, AMPLITUDE);
      const frames: Int16Array[] = [];
      for (let at = 0; at < input.length; at += frame)
        frames.push(resampler.process(input.subarray(at, at + frame)));
      const output = concat(frames);
      const ideal = idealSine(1000, to, output.length, AMPLITUDE, resampler.delaySamples);
      // the samples on either side of every frame edge, after the run-in
      const edges: number[] = [];
      let at = 0;
      for (const f of frames) {
        at += f.length;
        if (at > 4 * resampler.delaySamples && at + 2 < output.length) edges.push(at - 2, at - 1, at, at + 1);
      }
      const snr = snrDb(
        edges.map((n) => ideal[n]!),
        edges.map((n) => output[n]!),
        0,
        edges.length,
      );
      assert.ok(snr >= 60, `SNR at frame edges ${snr.toFixed(1)} dB`);
      const worst = Math.max(...edges.map((n) => Math.abs(ideal[n]! - output[n]!)));
      assert.ok(worst <= AMPLITUDE / 1000, `largest error at an edge: ${worst}`);
    });
  }
});

describe('Resampler contract', () => {
  test('process yields ceil(n * to / from) samples over a stream, flush the last delaySamples', () => {
    for (const [from, to] of PAIRS) {
      const resampler = new Resampler(from, to);
      let total = 0;
      for (const n of [1, 159, 160, 441, 7, 1000]) total += resampler.process(new Int16Array(n)).length;
      assert.equal(total, Math.ceil((1768 * to) / from), `${from} -> ${to}`);
      assert.equal(resampler.flush().length, resampler.delaySamples, `${from} -> ${to}`);
      assert.ok(Number.isInteger(resampler.delaySamples));
    }
  });

  test('an impulse comes out delaySamples late, at the same time position', () => {
    for (const [from, to] of [
      [8000, 16000],
      [16000, 8000],
      [48000, 16000],
      [16000, 24000],
    ] as const) {
      const resampler = new Resampler(from, to);
      const input = new Int16Array(from / 10);
      const at = from / 50; // 20 ms: a whole number of samples at both rates
      input[at] = 20000;
      const output = concat([resampler.process(input), resampler.flush()]);
      const peak = output.indexOf(Math.max(...output));
      assert.equal(peak, (at * to) / from + resampler.delaySamples, `${from} -> ${to}`);
    }
  });

  test('8k -> 16k is half-band: every other output is exactly an input sample', () => {
    const input = noise(1000, 11);
    const resampler = new Resampler(8000, 16000);
    const output = concat([resampler.process(input), resampler.flush()]);
    for (let i = 0; i < input.length; i++) assert.equal(output[2 * i + resampler.delaySamples], input[i]);
  });

  test('a constant stays constant (unit gain at DC, every phase)', () => {
    for (const [from, to] of PAIRS) {
      const resampler = new Resampler(from, to);
      const output = resampler.process(new Int16Array(from / 10).fill(12345));
      for (let n = 2 * resampler.delaySamples + 1; n < output.length; n++) {
        assert.ok(Math.abs(output[n]! - 12345) <= 1, `${from} -> ${to} at ${n}: ${output[n]}`);
      }
    }
  });

  test('full-scale input clips at the rails instead of wrapping around', () => {
    const square = Int16Array.from({ length: 1600 }, (_, i) => (Math.floor(i / 40) % 2 ? -32768 : 32767));
    for (const [from, to] of [
      [8000, 16000],
      [16000, 8000],
    ] as const) {
      const resampler = new Resampler(from, to);
      const output = resampler.process(square);
      const d = resampler.delaySamples;
      const half = (40 * to) / from;
      for (let n = 2 * d; n < output.length; n++) {
        const position = (n - d) % (2 * half);
        if (position > 4 && position < half - 4) assert.ok(output[n]! > 16000, `${from}->${to} at ${n}`);
        if (position > half + 4 && position < 2 * half - 4)
          assert.ok(output[n]! < -16000, `${from}->${to} at ${n}`);
      }
    }
  });

  test('reset forgets the past; the same rate is a plain copy', () => {
    const input = noise(500, 7);
    const used = new Resampler(8000, 16000);
    used.process(noise(333, 3));
    used.reset();
    assert.deepEqual(used.process(input), new Resampler(8000, 16000).process(input));
    const same = new Resampler(16000, 16000);
    assert.equal(same.delaySamples, 0);
    assert.deepEqual(same.process(input), input);
    assert.equal(same.flush().length, 0);
  });

  test('writes into a given output; refuses one too small and rates it cannot carry', () => {
    const resampler = new Resampler(8000, 16000);
    const out = new Int16Array(320);
    assert.equal(resampler.process(new Int16Array(160), out), out);
    assert.equal(resampler.process(new Int16Array(100), out).length, 200);
    assert.throws(() => resampler.processInto(new Int16Array(160), new Int16Array(100)), RangeError);
    assert.throws(() => new Resampler(8000, 8001), RangeError);
    assert.throws(() => new Resampler(0, 16000), RangeError);
    assert.throws(() => new Resampler(16000, 44100.5), RangeError);
    assert.throws(() => new Resampler(8000, 16000, { quality: 'ultra' as ResampleQuality }), RangeError);
  });
});

describe('Resampler half-band path (2:1 and 1:2)', () => {
  const taps = HALF_BAND_TAPS;
  const scale = 2 ** HALF_BAND_BITS;
  const clamp = (value: number) => Math.max(-32768, Math.min(32767, value));
  const at = (x: Int16Array, i: number) => (i >= 0 && i < x.length ? x[i]! : 0);

  /** The upsampler as a plain convolution with the integer taps: output 2i interpolated, 2i + 1 a copy. */
  function upsampleReference(x: Int16Array): Int16Array {
    const out = new Int16Array(2 * x.length);
    for (let i = 0; i < x.length; i++) {
      let sum = 0;
      taps.forEach((tap, j) => {
        sum += tap * (at(x, i - 13 + j) + at(x, i - 14 - j));
      });
      out[2 * i] = clamp(Math.floor((sum + scale / 4) / (scale / 2)));
      out[2 * i + 1] = at(x, i - 13);
    }
    return out;
  }

  /** The decimator likewise: output m is the filter centred on input 2m - 28. */
  function decimateReference(x: Int16Array): Int16Array {
    const out = new Int16Array(Math.ceil(x.length / 2));
    for (let m = 0; m < out.length; m++) {
      let sum = (scale / 2) * at(x, 2 * m - 28);
      taps.forEach((tap, j) => {
        sum += tap * (at(x, 2 * m - 27 + 2 * j) + at(x, 2 * m - 29 - 2 * j));
      });
      out[m] = clamp(Math.floor((sum + scale / 2) / scale));
    }
    return out;
  }

  test('the taps are the equiripple design, >= 70 dB down from 1.15 x the lower Nyquist frequency', (t) => {
    const designed = quantizeHalfBand(
      designHalfBand(taps.length, HALF_BAND_STOPBAND_EDGE),
      HALF_BAND_BITS,
      HALF_BAND_STOPBAND_EDGE,
    );
    assert.deepEqual(Array.from(designed), taps);
    assert.equal(
      taps.reduce((sum, tap) => sum + tap, 0),
      scale / 4,
      'DC gain exactly 1',
    );
    const peakDb =
      20 *
      Math.log10(
        stopbandPeak(
          taps.map((tap) => tap / scale),
          HALF_BAND_STOPBAND_EDGE,
          20_000,
        ),
      );
    t.diagnostic(`stopband peak ${peakDb.toFixed(2)} dB (and passband error, the filter being half-band)`);
    assert.ok(peakDb <= -70, `stopband peak ${peakDb.toFixed(2)} dB`);
  });

  // Full-scale noise drives the outputs into clipping; the chunks cross the loops' blocks and split odd lengths.
  const input = concat([noise(6001, 5), sine(3000, 16000, 3000, 32767)]);
  const chunkings = [[input.length], [160, 320, 1, 7, 2049, 4500], [3, 5000, 2, 4000]];

  for (const [from, to, reference] of [
    [8000, 16000, upsampleReference],
    [16000, 8000, decimateReference],
    [24000, 48000, upsampleReference],
    [48000, 24000, decimateReference],
  ] as const) {
    test(`${from} -> ${to} is exactly the plain convolution with those taps, however chunked`, () => {
      const expected = reference(input);
      for (const sizes of chunkings) {
        const resampler = new Resampler(from, to);
        const parts: Int16Array[] = [];
        for (let start = 0, i = 0; start < input.length; start += sizes[i % sizes.length]!, i++) {
          parts.push(resampler.process(input.subarray(start, start + sizes[i % sizes.length]!)));
        }
        assert.deepEqual(concat(parts), expected, `chunks ${sizes.join(', ')}`);
      }
    });
  }
});
