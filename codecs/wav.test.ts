/** WAV: PCM16 round trips, G.711 WAV files decoded like sox decodes them, clear refusals of other encodings. */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { mulawDecode, mulawEncode } from './g711.ts';
import { pcm16FromBytes, pcm16ToBytes } from './pcm16.ts';
import { noise, sweep } from './testing/signals.ts';
import { rawPcm16, sox, soxSkip } from './testing/sox.ts';
import { readWav, wavHeader, writeWav } from './wav.ts';

const require = createRequire(import.meta.url);
const { WaveFile } = require('wavefile') as typeof import('wavefile');

type Samples = Parameters<InstanceType<typeof WaveFile>['fromScratch']>[3];

function wavefileBytes(channels: number, rate: number, depth: string, samples: Samples): Uint8Array {
  const wav = new WaveFile();
  wav.fromScratch(channels, rate, depth, samples);
  return wav.toBuffer();
}

describe('writeWav / readWav', () => {
  test('round trip for any channel count, rate and samples', () => {
    const channel = fc.array(fc.integer({ min: -32768, max: 32767 }), { maxLength: 400 });
    fc.assert(
      fc.property(
        fc.constantFrom(8000, 16000, 22050, 24000, 48000),
        fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, () => channel))),
        (sampleRate, lists) => {
          const length = Math.max(...lists.map((l) => l.length));
          const channels = lists.map((l) => {
            const padded = new Int16Array(length);
            padded.set(l);
            return padded;
          });
          assert.deepEqual(readWav(writeWav({ sampleRate, channels })), { sampleRate, channels });
        },
      ),
      { numRuns: 200 },
    );
  });

  test('writes the same bytes as wavefile packing the samples itself', () => {
    const left = noise(1001, 1);
    const right = noise(1001, 2);
    const ours = writeWav({ sampleRate: 16000, channels: [left, right] });
    assert.deepEqual(new Uint8Array(ours), wavefileBytes(2, 16000, '16', [left, right]));
    assert.equal(ours.toString('ascii', 0, 4), 'RIFF');
    assert.equal(ours.readUInt32LE(40), 1001 * 4);
  });

  test('pads a shorter channel with silence (caller left, agent right)', () => {
    const { channels } = readWav(
      writeWav({ sampleRate: 8000, channels: [Int16Array.of(1, 2, 3), Int16Array.of(9)] }),
    );
    assert.deepEqual(
      channels.map((c) => [...c]),
      [
        [1, 2, 3],
        [9, 0, 0],
      ],
    );
  });

  test('refuses no channels and a bad rate', () => {
    assert.throws(() => writeWav({ sampleRate: 8000, channels: [] }), RangeError);
    assert.throws(() => writeWav({ sampleRate: 0, channels: [new Int16Array(1)] }), RangeError);
  });
});

describe('readWav of G.711 and other encodings', () => {
  test('decodes a mu-law WAV and an A-law WAV to PCM16', () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const mulaw = readWav(wavefileBytes(1, 8000, '8m', codes));
    assert.equal(mulaw.sampleRate, 8000);
    assert.deepEqual(mulaw.channels[0], mulawDecode(codes));
    const alaw = readWav(wavefileBytes(2, 8000, '8a', codes));
    assert.equal(alaw.channels.length, 2);
    assert.equal(alaw.channels[0]!.length, 128);
    assert.equal(alaw.channels[0]![0], -5504); // A-law 0x00
  });

  for (const encoding of ['u-law', 'a-law'] as const) {
    test(`reads a ${encoding} WAV written by sox as sox decodes it`, { skip: soxSkip }, () => {
      const input = sweep(100, 3900, 8000, 4000, 25000);
      const file = sox([...rawPcm16(8000), '-', '-t', 'wav', '-e', encoding, '-'], pcm16ToBytes(input));
      const expected = pcm16FromBytes(
        sox(['-t', 'wav', '-', '-t', 'raw', '-e', 'signed', '-b', '16', '-L', '-'], file),
      );
      const { sampleRate, channels } = readWav(file);
      assert.equal(sampleRate, 8000);
      assert.deepEqual(channels[0], Int16Array.from(expected));
      if (encoding === 'u-law') assert.deepEqual(channels[0], mulawDecode(mulawEncode(input)));
    });
  }

  test('refuses float, 24-bit and 8-bit PCM with a message naming the encoding', () => {
    assert.throws(
      () => readWav(wavefileBytes(1, 16000, '32f', [0.5, -0.5])),
      /unsupported WAV encoding: 32-bit IEEE float/,
    );
    assert.throws(
      () => readWav(wavefileBytes(1, 16000, '24', [1, 2])),
      /unsupported WAV encoding: 24-bit PCM/,
    );
    assert.throws(() => readWav(wavefileBytes(1, 16000, '8', [1, 2])), /unsupported WAV encoding: 8-bit PCM/);
  });

  test('refuses what is not a WAV file', () => {
    assert.throws(() => readWav(new Uint8Array(10)), /not a readable WAV file/);
    assert.throws(() => readWav(Buffer.from('RIFF....WAVEjunk')), /not a readable WAV file/);
  });
});

test('a streamed file with wavHeader reads back like writeWav', () => {
  const left = Int16Array.from({ length: 480 }, (_, i) => i * 7 - 1000);
  const right = Int16Array.from({ length: 480 }, (_, i) => -i * 3);
  const whole = writeWav({ sampleRate: 16000, channels: [left, right] });
  const data = whole.subarray(44);
  const streamed = Buffer.concat([wavHeader(16000, 2, data.length), data]);
  assert.deepEqual(streamed, whole);
});
