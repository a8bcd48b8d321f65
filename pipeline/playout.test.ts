import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Playout, type PlayoutSink } from './playout.ts';

class RecordingSink implements PlayoutSink {
  readonly sent: Array<
    { kind: 'audio'; samples: number } | { kind: 'mark'; name: string } | { kind: 'clear' }
  > = [];
  sendAudio(pcm: Int16Array) {
    this.sent.push({ kind: 'audio', samples: pcm.length });
  }
  sendMark(name: string) {
    this.sent.push({ kind: 'mark', name });
  }
  clear() {
    this.sent.push({ kind: 'clear' });
  }
  marks(): string[] {
    return this.sent.flatMap((s) => (s.kind === 'mark' ? [s.name] : []));
  }
}

const ms = (n: number) => new Int16Array(n * 16);

test('sends until the high watermark, then resumes as marks are acknowledged', () => {
  const sink = new RecordingSink();
  const p = new Playout(sink, { highWatermarkMs: 400, lowWatermarkMs: 200 });
  for (let i = 0; i < 10; i++) p.enqueue('t1', ms(100), `s${i}`);
  assert.equal(sink.marks().length, 4, '400 ms in flight');
  assert.equal(p.pendingMs, 1000);
  p.onPlaybackAck(sink.marks()[0]!);
  assert.equal(sink.marks().length, 4, 'still above the low watermark (300 ms)');
  p.onPlaybackAck(sink.marks()[2]!);
  assert.equal(sink.marks().length, 7, 'below 200 ms: tops the carrier up to 400 ms again');
  assert.deepEqual(p.heardOf('t1'), { ms: 300, text: 's0 s1 s2' });
});

test('flush drops queued and buffered audio, clears the carrier once, and says what was heard', () => {
  const sink = new RecordingSink();
  const p = new Playout(sink);
  p.enqueue('t1', ms(200), 'Hello there.');
  p.enqueue('t1', ms(200), 'How can I help?');
  p.enqueue('t1', ms(200), 'I can check your order.');
  p.onPlaybackAck(sink.marks()[0]!);
  const heard = p.flush('t1');
  assert.deepEqual(heard, { ms: 200, text: 'Hello there.' });
  assert.equal(sink.sent.at(-1)?.kind, 'clear');
  assert.equal(p.pendingMs, 0);
  assert.ok(p.isIdle());
  const before = sink.sent.length;
  p.onPlaybackAck(sink.marks()[1]!);
  assert.equal(sink.sent.length, before, 'acks of flushed marks are ignored');
  assert.equal(p.flush().ms, 0);
  assert.equal(sink.sent.filter((s) => s.kind === 'clear').length, 1, 'nothing to clear the second time');
});

test('drained resolves when the last mark is acknowledged; stale turns are dropped', async () => {
  const sink = new RecordingSink();
  const p = new Playout(sink, { highWatermarkMs: 100, lowWatermarkMs: 50 });
  p.enqueue('old', ms(100));
  p.enqueue('old', ms(100));
  p.enqueue('new', ms(100));
  p.dropOtherTurns('new');
  let drained = false;
  const done = p.drained().then(() => {
    drained = true;
  });
  p.onPlaybackAck(sink.marks()[0]!);
  assert.ok(sink.marks()[1]?.startsWith('new:'));
  await Promise.resolve();
  assert.equal(drained, false);
  p.onPlaybackAck(sink.marks()[1]!);
  await done;
  assert.ok(drained);
});

test('pause holds back unsent audio; resume goes on from there', () => {
  const sink = new RecordingSink();
  const p = new Playout(sink, { highWatermarkMs: 200, lowWatermarkMs: 100 });
  for (let i = 0; i < 4; i++) p.enqueue('t', ms(100), `s${i}`);
  assert.equal(sink.marks().length, 2);
  p.pause();
  p.onPlaybackAck(sink.marks()[1]!);
  assert.equal(sink.marks().length, 2, 'held while paused');
  p.resume();
  assert.equal(sink.marks().length, 4);
  assert.deepEqual(p.heardOf('t').text, 's0 s1');
});

test('a segment cut off midway counts its words by the share of its audio that played', () => {
  const sink = new RecordingSink();
  const p = new Playout(sink, { highWatermarkMs: 1000, lowWatermarkMs: 500 });
  p.enqueue('t', ms(100), 'Hello there.');
  p.enqueue('t', ms(100), 'Your order left the warehouse on Monday morning.');
  for (let i = 0; i < 3; i++) p.enqueue('t', ms(100));
  for (const mark of sink.marks().slice(0, 3)) p.onPlaybackAck(mark);
  // Hello there. (whole) + 200 of the second segment's 400 ms: 4 of its 8 words.
  assert.deepEqual(p.flush('t'), { ms: 300, text: 'Hello there. Your order left the' });
});
