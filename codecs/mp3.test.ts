import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Mp3Encoder } from '@breezystack/lamejs';
import { MP3_RATES, Mp3StreamEncoder, readMp3 } from './mp3.ts';
import { sine } from './testing/signals.ts';

const rms = (a: Int16Array) => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / Math.max(1, a.length));

/** Upward zero crossings per second: the tone's frequency, if it came through. */
function frequencyOf(samples: Int16Array, rate: number): number {
  let crossings = 0;
  for (let n = 1; n < samples.length; n++) if (samples[n - 1]! < 0 && samples[n]! >= 0) crossings++;
  return (crossings * rate) / samples.length;
}

function encodeMono(samples: Int16Array, rate: number, pieceSamples = 1000): Buffer {
  const encoder = new Mp3StreamEncoder(rate);
  const parts: Buffer[] = [];
  for (let at = 0; at < samples.length; at += pieceSamples)
    parts.push(encoder.encode(samples.subarray(at, at + pieceSamples)));
  parts.push(encoder.flush());
  return Buffer.concat(parts);
}

for (const rate of MP3_RATES) {
  test(`mono speech-rate MP3 at ${rate} Hz round-trips: its rate, one channel, the tone and its loudness`, async () => {
    const signal = sine(440, rate, rate * 2, 8000);
    const audio = await readMp3(encodeMono(signal, rate));
    assert.equal(audio.sampleRate, rate);
    assert.equal(audio.channels.length, 1);
    const decoded = audio.channels[0]!;
    // LAME pads with its encoder delay and a last partial frame: a little longer, never shorter.
    assert.ok(
      decoded.length >= signal.length && decoded.length < signal.length + 3 * 1152,
      `${decoded.length}`,
    );
    const middle = decoded.subarray(Math.floor(rate * 0.5), Math.floor(rate * 1.5));
    assert.ok(Math.abs(frequencyOf(middle, rate) - 440) < 10, `${frequencyOf(middle, rate)} Hz`);
    const ratio = rms(middle) / rms(signal);
    assert.ok(ratio > 0.8 && ratio < 1.2, `rms ratio ${ratio}`);
  });
}

test('a stereo MP3 keeps both channels; an ID3v2 tag in front is skipped', async () => {
  const rate = 16_000;
  const left = sine(440, rate, rate, 8000);
  const right = sine(880, rate, rate, 8000);
  const encoder = new Mp3Encoder(2, rate, 64);
  const frames = [encoder.encodeBuffer(left, right), encoder.flush()].map((b) =>
    Buffer.from(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)),
  );
  // ID3v2.4 header: "ID3", version 4.0, no flags, syncsafe size 20, then 20 bytes of tag.
  const tag = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 20]), Buffer.alloc(20, 0xff)]);
  const audio = await readMp3(Buffer.concat([tag, ...frames]));
  assert.equal(audio.channels.length, 2);
  const middle = (c: Int16Array) => c.subarray(4000, 12_000);
  assert.ok(Math.abs(frequencyOf(middle(audio.channels[0]!), rate) - 440) < 10);
  assert.ok(Math.abs(frequencyOf(middle(audio.channels[1]!), rate) - 880) < 20);
});

test('what is not an MP3, and an MP3 longer than the bound, are refused with a reason', async () => {
  await assert.rejects(readMp3(Buffer.from('not audio at all, just some text')), /no MP3 frame/);
  const long = encodeMono(sine(440, 8000, 8000, 8000), 8000);
  await assert.rejects(readMp3(long, 4000), /more than 4000 samples/);
  assert.throws(() => new Mp3StreamEncoder(44_100), /8000, 16000, 24000, 48000/);
});
