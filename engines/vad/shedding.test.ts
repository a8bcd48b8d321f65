/**
 * Silero VAD on live audio that arrives faster than the model answers: a stream never has more than its backlog
 * bound of windows waiting; the oldest beyond it are answered by the energy detector, in order, and counted.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { LIVE_MAX_BACKLOG_WINDOWS, SILERO_WINDOW_SAMPLES, SileroVad } from './providers/silero.ts';

after(async () => {
  await SileroVad.releaseAll();
});

/** One window of a 300 Hz tone at about -13 dBFS: speech-loud, never gated as silence. */
function loudWindow(): Int16Array {
  const window = new Int16Array(SILERO_WINDOW_SAMPLES);
  for (let i = 0; i < window.length; i++)
    window[i] = Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 16000));
  return window;
}

describe('Silero VAD backlog shedding', () => {
  test('a stream that falls behind has its oldest windows answered by energy, in order', async () => {
    const vad = await SileroVad.load({ maxBacklogWindows: 2, silenceGateDbfs: null });
    const before = { ...vad.stats };
    const stream = vad.createStream();
    const order: number[] = [];
    // Ten windows in one turn of the event loop: the model cannot have answered any of them yet.
    const pushes = Array.from({ length: 10 }, (_, i) => {
      const push = stream.push(loudWindow());
      void push.then(() => order.push(i));
      return push;
    });
    const results = await Promise.all(pushes);
    assert.equal(vad.stats.shed - before.shed, 8, 'all but the newest two were shed');
    assert.equal(vad.stats.windows - before.windows, 2, 'the newest two went to the model');
    assert.deepEqual(
      order,
      results.map((_, i) => i),
      'answers come in the order of the pushes',
    );
    for (const [i, result] of results.entries()) {
      assert.equal(result.length, 1);
      assert.ok(result[0]! >= 0 && result[0]! <= 1, `window ${i}: ${result[0]}`);
    }
    // A loud tone over digital silence reads as sound to the energy detector.
    assert.ok(
      results.slice(0, 8).every((r) => r[0]! > 0.5),
      JSON.stringify(results),
    );
  });

  test('a stream that keeps up sheds nothing, and by default nothing is ever shed', async () => {
    const live = await SileroVad.load({ maxBacklogWindows: LIVE_MAX_BACKLOG_WINDOWS, silenceGateDbfs: null });
    const before = live.stats.shed;
    const stream = live.createStream();
    for (let i = 0; i < 20; i++) await stream.push(loudWindow());
    assert.equal(live.stats.shed, before);

    const offline = await SileroVad.load({ silenceGateDbfs: null });
    const offlineStream = offline.createStream();
    const results = await Promise.all(Array.from({ length: 40 }, () => offlineStream.push(loudWindow())));
    assert.equal(results.length, 40);
    assert.equal(offline.stats.shed, 0);
  });

  test('the bound is validated', async () => {
    await assert.rejects(SileroVad.load({ maxBacklogWindows: 0 }), RangeError);
    await assert.rejects(SileroVad.load({ maxBacklogWindows: 1.5 }), RangeError);
  });
});
