/**
 * SttAudioFeed: quiet frames reach the STT in 100 ms chunks, frames near speech one by one and at once, and the
 * STT always gets exactly the audio pushed, in order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SttAudioFeed } from './stt-feed.ts';

/** An STT that keeps a copy of each piece, as real ones do (the feed reuses its chunk buffer). */
function recordingStt() {
  const pieces: Int16Array[] = [];
  return { pieces, push: (frame: Int16Array) => pieces.push(frame.slice()) };
}

function frame(start: number, length = 320): Int16Array {
  return Int16Array.from({ length }, (_, i) => (start + i) % 30000);
}

test('quiet frames go in 100 ms chunks; near speech, what is gathered goes at once and each frame follows', () => {
  const stt = recordingStt();
  const feed = new SttAudioFeed(stt);
  for (let i = 0; i < 7; i++) feed.push(frame(i * 320), false);
  assert.deepEqual(
    stt.pieces.map((p) => p.length),
    [1600],
  );
  feed.push(frame(7 * 320), true);
  feed.push(frame(8 * 320), true);
  assert.deepEqual(
    stt.pieces.map((p) => p.length),
    [1600, 640, 320, 320],
  );
  feed.push(frame(9 * 320), false);
  feed.flush();
  feed.flush();
  const all = Int16Array.from(stt.pieces.flatMap((p) => [...p]));
  assert.deepEqual(all, frame(0, 10 * 320));
});

test('frames of any length are cut at chunk boundaries', () => {
  const stt = recordingStt();
  const feed = new SttAudioFeed(stt, 60);
  feed.push(frame(0, 2000), false);
  feed.flush();
  assert.deepEqual(
    stt.pieces.map((p) => p.length),
    [960, 960, 80],
  );
  assert.deepEqual(Int16Array.from(stt.pieces.flatMap((p) => [...p])), frame(0, 2000));
});
