import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readOggOpus, writeOggOpus } from './ogg-opus.ts';
import { OpusCodec } from './opus.ts';

function tone(samples: number, hz: number): Int16Array {
  const out = new Int16Array(samples);
  for (let n = 0; n < samples; n++) out[n] = Math.round(8000 * Math.sin((2 * Math.PI * hz * n) / 48_000));
  return out;
}

test('an Ogg Opus file decodes to its length at 48 kHz, pre-skip dropped, and keeps a tone', () => {
  const codec = new OpusCodec(48_000);
  const signal = tone(48_000, 440);
  const packets: Buffer[] = [];
  for (let at = 0; at < signal.length; at += 960) packets.push(codec.encode(signal.subarray(at, at + 960)));
  const audio = readOggOpus(writeOggOpus(packets, 1));
  assert.equal(audio.sampleRate, 48_000);
  assert.equal(audio.channels.length, 1);
  assert.equal(audio.channels[0]!.length, 48_000 - 312);
  // The tone's energy comes through (Opus is lossy: loudness within a few dB).
  const rms = (a: Int16Array) => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / a.length);
  const ratio = rms(audio.channels[0]!.subarray(4800)) / rms(signal.subarray(4800));
  assert.ok(ratio > 0.7 && ratio < 1.3, `rms ratio ${ratio}`);
});

test('not Ogg, Ogg that is not Opus, and a truncated page are refused with a reason', () => {
  assert.throws(() => readOggOpus(Buffer.from('RIFF0000WAVE')), /not an Ogg page/);
  const vorbis = writeOggOpus([], 1);
  vorbis.write('OpusHexx', 28 + 0, 'latin1');
  assert.throws(() => readOggOpus(vorbis), /not Opus|Ogg page/);
  const whole = writeOggOpus([Buffer.alloc(40, 1)], 1);
  assert.throws(() => readOggOpus(whole.subarray(0, whole.length - 10)), /truncated/);
});
