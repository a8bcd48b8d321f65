/**
 * Silero VAD through our own inference loop: speech from eSpeak NG is found where it is, silence and noise are
 * not speech, and batching many streams into one run changes no stream's probabilities.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { SileroVad } from './providers/silero.ts';
import { type SegmentEvent, SpeechSegmenter } from './segmenter.ts';
import {
  compose,
  espeakSkip,
  frames,
  mix,
  type Region,
  silence,
  speak,
  whiteNoise,
} from './testing/speech.ts';
import type { VadStream } from './types.ts';

/** Detected speech may start this much before or after the first audible sample (one 32 ms window plus slack). */
const START_TOLERANCE_MS = 150;
/** eSpeak's last phoneme fades out; Silero may hold on a little longer. Segment end = where silence began. */
const END_TOLERANCE_MS = 300;

let vad: SileroVad;
before(async () => {
  vad = await SileroVad.load();
});
after(async () => {
  await SileroVad.releaseAll();
});

async function probabilities(stream: VadStream, audio: Int16Array): Promise<number[]> {
  const out: number[] = [];
  for (const frame of frames(audio)) out.push(...(await stream.push(frame)));
  return out;
}

function segments(probs: readonly number[]): Region[] {
  const segmenter = SpeechSegmenter.for(vad);
  const events: SegmentEvent[] = segmenter.pushAll(probs);
  const last = segmenter.finish();
  if (last) events.push(last);
  const regions: Region[] = [];
  for (const e of events) if (e.type === 'speech_end') regions.push({ fromMs: e.startMs, toMs: e.atMs });
  return regions;
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

function speechFraction(probs: readonly number[]): number {
  return probs.filter((p) => p >= 0.5).length / probs.length;
}

function assertMatches(found: Region[], truth: Region[]): void {
  assert.equal(
    found.length,
    truth.length,
    `segments ${JSON.stringify(found)} vs speech ${JSON.stringify(truth)}`,
  );
  truth.forEach((t, i) => {
    const f = found[i]!;
    assert.ok(Math.abs(f.fromMs - t.fromMs) <= START_TOLERANCE_MS, `start ${f.fromMs} vs ${t.fromMs}`);
    assert.ok(Math.abs(f.toMs - t.toMs) <= END_TOLERANCE_MS, `end ${f.toMs} vs ${t.toMs}`);
  });
}

describe('Silero VAD on eSpeak NG speech', { skip: espeakSkip }, () => {
  // Made inside each test (once), so that a missing espeak-ng in CI fails the tests rather than cancelling them.
  // Both at about -20 dBFS RMS.
  const english = once(() =>
    speak('The quick brown fox jumps over the lazy dog near the river bank.', 'en-us'),
  );
  const hindi = once(() => speak('मेरा नाम राहुल है और मैं दिल्ली से बोल रहा हूँ', 'hi'));

  test('finds English and Hindi speech between silences, where it is', async () => {
    const { audio, speech } = compose([
      silence(1000),
      { speech: english() },
      silence(1500),
      { speech: hindi() },
      silence(800),
    ]);
    const probs = await probabilities(vad.createStream(), audio);
    assertMatches(segments(probs), speech);
  });

  test('finds speech mixed with white noise 15 dB below it', async () => {
    const { audio, speech } = compose([
      silence(1000),
      { speech: english() },
      silence(1500),
      { speech: hindi() },
      silence(800),
    ]);
    const noisy = mix(audio, whiteNoise(audio.length / 16, -35));
    const probs = await probabilities(vad.createStream(), noisy);
    assertMatches(segments(probs), speech);
    // The noise-only stretches between and around the speech stay silence.
    const windowMs = 32;
    const gap = probs.slice(
      Math.ceil((speech[0]!.toMs + 400) / windowMs),
      Math.floor(speech[1]!.fromMs / windowMs) - 2,
    );
    assert.ok(
      gap.length > 20 && speechFraction(gap) === 0,
      `noise between utterances: ${speechFraction(gap)}`,
    );
  });

  test('probabilities do not depend on how the audio is chunked', async () => {
    const audio = compose([silence(300), { speech: english() }]).audio;
    const byFrame = await probabilities(vad.createStream(), audio);
    const whole = await vad.createStream().push(audio);
    const odd: number[] = [];
    const stream = vad.createStream();
    for (let at = 0; at < audio.length; at += 777)
      odd.push(...(await stream.push(audio.subarray(at, at + 777))));
    assert.deepEqual(whole, byFrame);
    assert.deepEqual(odd, byFrame);
  });

  test('windows of many streams batched into one run give each stream the probabilities it gets alone', async () => {
    const audio = compose([silence(200), { speech: hindi() }, silence(300)]).audio;
    const alone = await probabilities(vad.createStream(), audio);
    const runsBefore = vad.stats.runs;
    const windowsBefore = vad.stats.windows;
    const skippedBefore = vad.stats.skipped;
    const streams = Array.from({ length: 6 }, () => vad.createStream());
    const pushes: Promise<number[]>[][] = streams.map(() => []);
    // Interleave the streams frame by frame without awaiting, as a gateway carrying six calls would.
    for (const frame of frames(audio)) {
      for (const [i, s] of streams.entries()) pushes[i]!.push(s.push(frame));
    }
    const together = await Promise.all(pushes.map(async (p) => (await Promise.all(p)).flat()));
    const runs = vad.stats.runs - runsBefore;
    const windows = vad.stats.windows - windowsBefore;
    // The trailing silence outlasts the gate's hangover: its last windows are answered without the model.
    assert.equal(windows + vad.stats.skipped - skippedBefore, 6 * alone.length);
    assert.ok(runs < windows / 3, `batched: ${windows} windows in ${runs} runs`);
    for (const probs of together) {
      assert.equal(probs.length, alone.length);
      for (const [i, p] of probs.entries()) {
        assert.ok(Math.abs(p - alone[i]!) < 1e-4, `window ${i}: ${p} vs ${alone[i]}`);
      }
    }
  });

  test('reset makes a stream behave as a new one, even with windows still in flight', async () => {
    const fresh = await probabilities(vad.createStream(), english());
    const stream = vad.createStream();
    const inFlight = stream.push(hindi().subarray(0, 16000));
    stream.reset();
    const after = await probabilities(stream, english());
    assert.equal((await inFlight).length, Math.floor(16000 / 512));
    assert.deepEqual(after, fresh);
  });
});

describe('Silero VAD on silence and noise', () => {
  test('digital silence and a quiet line are not speech', async () => {
    for (const audio of [silence(3000), whiteNoise(3000, -65)]) {
      const probs = await probabilities(vad.createStream(), audio);
      assert.equal(speechFraction(probs), 0);
      assert.deepEqual(segments(probs), []);
    }
  });

  test('loud white noise is mostly not speech', async () => {
    const probs = await probabilities(vad.createStream(), whiteNoise(5000, -20, 777));
    assert.ok(speechFraction(probs) < 0.05, `speech fraction in noise: ${speechFraction(probs)}`);
  });

  test('a frame shorter than a window resolves to no probabilities; 512 samples to one', async () => {
    const stream = vad.createStream();
    assert.deepEqual(await stream.push(new Int16Array(320)), []);
    const one = await stream.push(new Int16Array(192));
    assert.equal(one.length, 1);
    assert.ok(one[0]! >= 0 && one[0]! <= 1);
  });

  test('load shares one detector per process; a file that is not a Silero model is an EngineError', async () => {
    assert.equal(await SileroVad.load(), vad);
    await assert.rejects(SileroVad.load({ modelPath: '/nonexistent/silero.onnx' }), (e: unknown) =>
      isEngineError(e),
    );
  });
});
