/** Opus through libopus: 20 ms frames in and out, and a decoded tone that still correlates with its input. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { OpusCodec, type OpusRate } from './opus.ts';
import { bestCorrelation, concat, sine } from './testing/signals.ts';

/** Encode then decode `frames` 20 ms frames of a tone; returns input and decoded output. */
function roundTrip(rate: OpusRate, freq: number, amplitude: number, frames: number) {
  const codec = new OpusCodec(rate);
  const input = sine(freq, rate, codec.frameSamples * frames, amplitude);
  const decoded: Int16Array[] = [];
  for (let at = 0; at < input.length; at += codec.frameSamples) {
    const packet = codec.encode(input.subarray(at, at + codec.frameSamples));
    assert.ok(packet.length > 0 && packet.length < 1500, `packet of ${packet.length} bytes`);
    const pcm = codec.decode(packet);
    assert.equal(pcm.length, codec.frameSamples);
    decoded.push(pcm);
  }
  return { input, output: concat(decoded) };
}

describe('OpusCodec', () => {
  for (const rate of [16000, 48000] as const) {
    test(`${rate} Hz: 20 ms frames (${rate / 50} samples) in and out; a 440 Hz tone survives`, (t) => {
      const { input, output } = roundTrip(rate, 440, 10000, 50);
      // skip the first 100 ms while the encoder settles; Opus delays by a few ms (lookahead)
      const skip = rate / 10;
      const { lag, correlation } = bestCorrelation(
        input.subarray(skip, -skip),
        output.subarray(skip),
        rate / 50,
      );
      t.diagnostic(
        `correlation ${correlation.toFixed(4)} at the best lag, ${lag} samples (codec delay + whole periods)`,
      );
      assert.ok(correlation > 0.95, `correlation ${correlation}`);
    });
  }

  test('any voice-band tone and level correlates with its decoded self (> 0.9)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 150, max: 3500 }),
        fc.integer({ min: 1000, max: 30000 }),
        (freq, amplitude) => {
          const { input, output } = roundTrip(16000, freq, amplitude, 15);
          const { correlation } = bestCorrelation(input.subarray(1600, -1600), output.subarray(1600), 320);
          return correlation > 0.9;
        },
      ),
      { numRuns: 15 },
    );
  });

  test('refuses anything but one 20 ms frame, and rates and channels it does not carry', () => {
    const codec = new OpusCodec(16000);
    assert.throws(() => codec.encode(new Int16Array(160)), RangeError);
    assert.throws(() => new OpusCodec(8000 as OpusRate), RangeError);
    assert.throws(() => new OpusCodec(16000, 2 as 1), RangeError);
  });

  test('a bitrate can be set; a lower one gives smaller packets', () => {
    const frame = sine(440, 16000, 320, 10000);
    const small = new OpusCodec(16000, 1, { bitrateBps: 8000 });
    const large = new OpusCodec(16000, 1, { bitrateBps: 64000 });
    let smallBytes = 0;
    let largeBytes = 0;
    for (let i = 0; i < 20; i++) {
      smallBytes += small.encode(frame).length;
      largeBytes += large.encode(frame).length;
    }
    assert.ok(smallBytes < largeBytes, `${smallBytes} vs ${largeBytes}`);
  });

  test('decodes a packet given as a plain Uint8Array at any offset', () => {
    const codec = new OpusCodec(16000);
    const packet = codec.encode(sine(440, 16000, 320, 10000));
    const backing = new Uint8Array(packet.length + 3);
    backing.set(packet, 3);
    assert.equal(new OpusCodec(16000).decode(backing.subarray(3)).length, 320);
  });
});
