/**
 * Energy detector: level above an adaptive noise floor, on synthetic signals (tones as voiced sound, seeded
 * white noise as background); deterministic and independent of chunking.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENERGY_WINDOW_SAMPLES, EnergyVad } from './providers/energy.ts';
import { SpeechSegmenter } from './segmenter.ts';
import { compose, mix, silence, tone, whiteNoise } from './testing/speech.ts';

const WINDOW_MS = 20;

function analyse(audio: Int16Array): number[] {
  return new EnergyVad().createStream().analyse(audio);
}

/** Probabilities of the windows inside [fromMs, toMs). */
function slice(probs: readonly number[], fromMs: number, toMs: number): number[] {
  return probs.slice(Math.ceil(fromMs / WINDOW_MS), Math.floor(toMs / WINDOW_MS));
}

describe('EnergyVad', () => {
  test('digital silence and a quiet line are not speech', () => {
    for (const audio of [
      silence(3000),
      whiteNoise(3000, -75),
      compose([silence(1000), whiteNoise(2000, -72)]).audio,
    ]) {
      const probs = analyse(audio);
      assert.equal(probs.length, 150);
      assert.ok(Math.max(...probs) < 0.05, `max ${Math.max(...probs)}`);
    }
  });

  test('a voiced tone over a quiet background is speech; the background is not', () => {
    const background = whiteNoise(4000, -55);
    const audio = mix(background, compose([silence(1000), tone(1500, 220, -22)]).audio);
    const probs = analyse(audio);
    assert.ok(Math.max(...slice(probs, 0, 1000)) < 0.05);
    assert.ok(Math.min(...slice(probs, 1000, 2500)) > 0.95);
    assert.ok(Math.max(...slice(probs, 2520, 4000)) < 0.05);
  });

  test('syllable-like bursts are found one by one with the segmenter, after the floor has learnt the room', () => {
    const burst = (): Int16Array => tone(400, 180, -25);
    const gap = (): Int16Array => silence(400);
    const { audio: bursts } = compose([silence(3000), burst(), gap(), burst(), gap(), burst(), gap()]);
    const audio = mix(bursts, whiteNoise(bursts.length / 16, -45));
    const segmenter = SpeechSegmenter.for(new EnergyVad());
    const events = segmenter.pushAll(analyse(audio));
    const starts = events.filter((e) => e.type === 'speech_start').map((e) => e.atMs);
    const ends = events.filter((e) => e.type === 'speech_end').map((e) => e.atMs);
    assert.deepEqual(starts, [3000, 3800, 4600]);
    assert.deepEqual(ends, [3400, 4200, 5000]);
  });

  test('a steady new background is learnt within about two seconds', () => {
    const audio = compose([silence(1000), whiteNoise(5000, -30)]).audio;
    const stream = new EnergyVad().createStream();
    const probs = stream.analyse(audio);
    // At first the noise is louder than anything heard: it reads as speech, as documented.
    assert.ok(Math.min(...slice(probs, 1000, 1400)) > 0.95);
    assert.ok(
      Math.max(...slice(probs, 3600, 6000)) < 0.2,
      `after learning: ${Math.max(...slice(probs, 3600, 6000))}`,
    );
    assert.ok(Math.abs(stream.noiseFloorDbfs - -30) < 2, `floor ${stream.noiseFloorDbfs}`);
  });

  test('speech over the learnt background is still speech', () => {
    const background = whiteNoise(6000, -40);
    const audio = mix(background, compose([silence(4000), tone(1000, 200, -22)]).audio);
    const probs = analyse(audio);
    assert.ok(Math.max(...slice(probs, 2800, 4000)) < 0.2);
    assert.ok(Math.min(...slice(probs, 4000, 5000)) > 0.95);
  });

  test('deterministic, and the same whatever the chunk sizes', () => {
    const audio = mix(
      compose([silence(700), tone(600, 300, -20), silence(900)]).audio,
      whiteNoise(2200, -50),
    );
    const whole = analyse(audio);
    assert.deepEqual(analyse(audio), whole);
    const stream = new EnergyVad().createStream();
    const chunked: number[] = [];
    for (let at = 0; at < audio.length; at += 123)
      chunked.push(...stream.analyse(audio.subarray(at, at + 123)));
    assert.deepEqual(chunked, whole);
  });

  test('push resolves to what analyse returns; one probability per 20 ms frame; reset starts afresh', async () => {
    const audio = compose([whiteNoise(1000, -30), tone(500, 250, -20)]).audio;
    const stream = new EnergyVad().createStream();
    assert.deepEqual(
      await stream.push(audio.subarray(0, ENERGY_WINDOW_SAMPLES)),
      analyse(audio.subarray(0, 320)),
    );
    assert.deepEqual(await stream.push(new Int16Array(100)), []);
    stream.reset();
    assert.deepEqual(await stream.push(audio), analyse(audio));
  });
});
