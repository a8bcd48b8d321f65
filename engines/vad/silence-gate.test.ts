/**
 * The silence gate in front of Silero: long silences skip the model, and speech is still found where it is, as
 * the model on every window finds it (eSpeak NG speech after silences, on a clean and on a quiet line); a line
 * whose noise is above the gate is not gated at all; answers of the gate never overtake the model's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SILENCE_GATE_HANGOVER_WINDOWS, SilenceGate } from './providers/silence-gate.ts';
import { SileroVad } from './providers/silero.ts';
import { SpeechSegmenter } from './segmenter.ts';
import { compose, espeakSkip, frames, mix, silence, speak, whiteNoise } from './testing/speech.ts';

const WINDOW = 512;
/** How far a probability may move because the model's state rested through a silence instead of walking it. */
const PROBABILITY_TOLERANCE = 0.2;

describe('SilenceGate', () => {
  const quiet = 10 ** (-70 / 10);
  const loud = 10 ** (-30 / 10);

  test('quiet windows are skipped only after the hangover; sound starts the count again', () => {
    const gate = new SilenceGate(-60);
    const run = (n: number, meanSquare: number) => Array.from({ length: n }, () => gate.skip(meanSquare));
    assert.deepEqual(
      run(SILENCE_GATE_HANGOVER_WINDOWS, quiet),
      Array(SILENCE_GATE_HANGOVER_WINDOWS).fill(false),
    );
    assert.deepEqual(run(3, quiet), [true, true, true]);
    assert.equal(gate.skip(loud), false);
    assert.equal(gate.skip(quiet), false);
    gate.reset();
    assert.deepEqual(run(SILENCE_GATE_HANGOVER_WINDOWS, quiet).includes(true), false);
  });

  test('the level decides: just above the gate is never skipped', () => {
    const gate = new SilenceGate(-60, 0);
    assert.equal(gate.skip(10 ** (-59.9 / 10)), false);
    assert.equal(gate.skip(10 ** (-60.1 / 10)), true);
  });
});

describe('Silero behind the silence gate', () => {
  let gated: SileroVad;
  let everyWindow: SileroVad;
  before(async () => {
    gated = await SileroVad.load();
    everyWindow = await SileroVad.load({ silenceGateDbfs: null });
  });
  after(async () => {
    await SileroVad.releaseAll();
  });

  async function probabilities(vad: SileroVad, audio: Int16Array): Promise<number[]> {
    const stream = vad.createStream();
    const out: number[] = [];
    for (const frame of frames(audio)) out.push(...(await stream.push(frame)));
    return out;
  }

  function segments(probs: readonly number[]): string[] {
    return SpeechSegmenter.for(gated)
      .pushAll(probs)
      .map((e) => `${e.type}@${e.atMs}`);
  }

  /** Probabilities with and without the gate, and how many windows the gate answered. */
  async function compare(audio: Int16Array) {
    const skippedBefore = gated.stats.skipped;
    const withGate = await probabilities(gated, audio);
    const skipped = gated.stats.skipped - skippedBefore;
    const without = await probabilities(everyWindow, audio);
    const worst = Math.max(...withGate.map((p, i) => Math.abs(p - without[i]!)));
    return { withGate, without, skipped, worst };
  }

  describe('on eSpeak NG speech', { skip: espeakSkip }, () => {
    const conversation = () => {
      const english = speak('The quick brown fox jumps over the lazy dog near the river bank.', 'en-us');
      const hindi = speak('मेरा नाम राहुल है और मैं दिल्ली से बोल रहा हूँ', 'hi');
      return compose([
        silence(1000),
        { speech: english },
        silence(2500),
        { speech: hindi },
        silence(1500),
        { speech: english },
        silence(800),
      ]).audio;
    };

    test('long silences skip the model; the speech segments are those of the model on every window', async () => {
      const audio = conversation();
      for (const line of [audio, mix(audio, whiteNoise(audio.length / 16, -65))]) {
        const { withGate, without, skipped, worst } = await compare(line);
        assert.ok(skipped > withGate.length / 5, `skipped ${skipped} of ${withGate.length} windows`);
        assert.deepEqual(segments(withGate), segments(without));
        assert.ok(worst < PROBABILITY_TOLERANCE, `largest difference ${worst}`);
      }
    });

    test('a line whose noise is above the gate goes through the model whole', async () => {
      const audio = conversation();
      const { withGate, without, skipped } = await compare(mix(audio, whiteNoise(audio.length / 16, -45)));
      assert.equal(skipped, 0);
      assert.deepEqual(withGate, without);
    });
  });

  test('an answer of the gate comes after the windows pushed before it', async () => {
    const stream = gated.createStream();
    const order: number[] = [];
    const pushes: Promise<number[]>[] = [];
    // The hangover's windows go to the model (not awaited: still in flight); the next one is the gate's.
    for (let i = 0; i <= SILENCE_GATE_HANGOVER_WINDOWS; i++) {
      const push = stream.push(new Int16Array(WINDOW));
      void push.then(() => order.push(i));
      pushes.push(push);
    }
    const results = await Promise.all(pushes);
    assert.deepEqual(
      order,
      results.map((_, i) => i),
    );
    assert.deepEqual(results.at(-1), [0]);
  });
});
