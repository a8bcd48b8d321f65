/**
 * SpeechSegmenter: hysteresis, minimum speech and silence, timestamps in ms of audio; table-driven on
 * synthetic probability sequences (32 ms windows, upstream Silero thresholds), plus invariants over random ones.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { EnergyVad } from './providers/energy.ts';
import { type SegmentEvent, SpeechSegmenter } from './segmenter.ts';
import { DEFAULT_VAD_THRESHOLDS } from './types.ts';

const W = 32;

/** `n` windows of probability `p`. */
const run = (n: number, p: number): number[] => Array.from({ length: n }, () => p);
const seq = (...parts: number[][]): number[] => parts.flat();

interface Case {
  name: string;
  probabilities: number[];
  events: SegmentEvent[];
}

const cases: Case[] = [
  { name: 'silence: nothing', probabilities: run(100, 0.02), events: [] },
  {
    name: 'one utterance: start at its first window, end where silence began',
    probabilities: seq(run(10, 0.1), run(20, 0.9), run(10, 0.1)),
    events: [
      { type: 'speech_start', atMs: 10 * W, decidedAtMs: 18 * W }, // 8 windows = 256 ms >= 250 ms
      { type: 'speech_end', atMs: 30 * W, startMs: 10 * W, decidedAtMs: 34 * W }, // 4 windows = 128 ms >= 100 ms
    ],
  },
  {
    name: 'a 160 ms burst (a click, a cough) is not speech',
    probabilities: seq(run(5, 0.1), run(5, 0.95), run(20, 0.1)),
    events: [],
  },
  {
    name: 'a burst just long enough counts',
    probabilities: seq(run(2, 0.1), run(8, 0.95), run(6, 0.1)),
    events: [
      { type: 'speech_start', atMs: 2 * W, decidedAtMs: 10 * W },
      { type: 'speech_end', atMs: 10 * W, startMs: 2 * W, decidedAtMs: 14 * W },
    ],
  },
  {
    name: 'a 64 ms dip inside speech is bridged',
    probabilities: seq(run(10, 0.9), run(2, 0.1), run(10, 0.9), run(5, 0.1)),
    events: [
      { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W },
      { type: 'speech_end', atMs: 22 * W, startMs: 0, decidedAtMs: 26 * W },
    ],
  },
  {
    name: 'a 128 ms pause splits two utterances',
    probabilities: seq(run(10, 0.9), run(4, 0.1), run(10, 0.9), run(5, 0.1)),
    events: [
      { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W },
      { type: 'speech_end', atMs: 10 * W, startMs: 0, decidedAtMs: 14 * W },
      { type: 'speech_start', atMs: 14 * W, decidedAtMs: 22 * W },
      { type: 'speech_end', atMs: 24 * W, startMs: 14 * W, decidedAtMs: 28 * W },
    ],
  },
  {
    name: 'hysteresis: once speaking, 0.4 (between thresholds) keeps the segment open',
    probabilities: seq(run(10, 0.9), run(20, 0.4), run(4, 0.2)),
    events: [
      { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W },
      { type: 'speech_end', atMs: 30 * W, startMs: 0, decidedAtMs: 34 * W },
    ],
  },
  { name: 'hysteresis: 0.4 never opens a segment', probabilities: run(50, 0.4), events: [] },
  {
    name: 'a dip that began silence is only cancelled by activation, not by 0.4',
    probabilities: seq(run(10, 0.9), run(2, 0.2), run(1, 0.4), run(1, 0.2), run(3, 0.2)),
    events: [
      { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W },
      { type: 'speech_end', atMs: 10 * W, startMs: 0, decidedAtMs: 14 * W },
    ],
  },
  {
    name: 'speech with a short gap is reported once the whole reaches 250 ms',
    probabilities: seq(run(4, 0.9), run(1, 0.2), run(4, 0.9), run(4, 0.1)),
    events: [
      { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W },
      { type: 'speech_end', atMs: 9 * W, startMs: 0, decidedAtMs: 13 * W },
    ],
  },
];

describe('SpeechSegmenter', () => {
  for (const c of cases) {
    test(c.name, () => {
      const segmenter = new SpeechSegmenter(W);
      assert.deepEqual(segmenter.pushAll(c.probabilities), c.events);
    });
  }

  test('finish closes an open segment now, or where its silence began', () => {
    const a = new SpeechSegmenter(W);
    a.pushAll(run(10, 0.9));
    assert.equal(a.speaking, true);
    assert.deepEqual(a.finish(), { type: 'speech_end', atMs: 10 * W, startMs: 0, decidedAtMs: 10 * W });
    assert.equal(a.speaking, false);
    const b = new SpeechSegmenter(W);
    b.pushAll(seq(run(10, 0.9), run(2, 0.1)));
    assert.deepEqual(b.finish(), { type: 'speech_end', atMs: 10 * W, startMs: 0, decidedAtMs: 12 * W });
    assert.equal(new SpeechSegmenter(W).finish(), null);
  });

  test('reset starts over at time zero', () => {
    const s = new SpeechSegmenter(W);
    s.pushAll(run(10, 0.9));
    s.reset();
    assert.equal(s.positionMs, 0);
    assert.equal(s.speaking, false);
    assert.deepEqual(s.pushAll(run(8, 0.9))[0], { type: 'speech_start', atMs: 0, decidedAtMs: 8 * W });
  });

  test('window length follows the detector (energy: 20 ms) and thresholds are validated', () => {
    assert.equal(SpeechSegmenter.for(new EnergyVad()).windowMs, 20);
    assert.throws(
      () => new SpeechSegmenter(W, { ...DEFAULT_VAD_THRESHOLDS, activation: 0.3, deactivation: 0.5 }),
    );
    assert.throws(() => new SpeechSegmenter(0));
  });

  test('invariants: starts and ends alternate, segments last at least minSpeechMs, time never goes back', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 400 }), (probs) => {
        const s = new SpeechSegmenter(W);
        const events = s.pushAll(probs);
        const last = s.finish();
        if (last) events.push(last);
        let open: number | null = null;
        let lastDecided = 0;
        for (const e of events) {
          assert.ok(e.decidedAtMs >= e.atMs && e.decidedAtMs >= lastDecided);
          lastDecided = e.decidedAtMs;
          if (e.type === 'speech_start') {
            assert.equal(open, null);
            assert.ok(e.decidedAtMs - e.atMs >= DEFAULT_VAD_THRESHOLDS.minSpeechMs);
            open = e.atMs;
          } else {
            assert.equal(e.startMs, open);
            assert.ok(e.atMs - e.startMs >= DEFAULT_VAD_THRESHOLDS.minSpeechMs);
            open = null;
          }
        }
        assert.equal(open, null);
      }),
    );
  });
});
