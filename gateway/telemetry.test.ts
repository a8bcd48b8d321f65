/**
 * Stream telemetry and pacing as pure logic, with made-up arrival times: gaps and late frames from carrier
 * timestamps and from arrivals alone, clipping, outbound underruns, and the pacer's real-time schedule.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PacedQueue } from './pacer.ts';
import { StreamTelemetry, streamEndFigures } from './telemetry.ts';

describe('inbound timing', () => {
  test('steady 20 ms frames with carrier timestamps: no gap, nothing late', () => {
    const t = new StreamTelemetry();
    for (let i = 0; i < 100; i++) t.audio(1000 + i * 20 + (i % 3), 20, i * 20, i + 1);
    assert.equal(t.inbound.gaps, 0);
    assert.equal(t.inbound.lateFrames, 0);
    assert.equal(t.inbound.audioMs, 2000);
  });

  test('a timestamp jump is a gap of the missing duration; a late arrival is late', () => {
    const t = new StreamTelemetry();
    t.audio(0, 20, 0, 1);
    t.audio(20, 20, 20, 2);
    t.audio(100, 20, 100, 5); // 60 ms of audio never came
    assert.equal(t.inbound.gaps, 1);
    assert.equal(t.inbound.gapMs, 60);
    assert.equal(t.inbound.lateFrames, 0, 'it arrived on time for its timestamp');
    t.audio(300, 20, 120, 6); // arrives 180 ms behind its schedule
    assert.equal(t.inbound.lateFrames, 1);
    assert.equal(t.inbound.maxLateMs, 180);
  });

  test('without timestamps: a pause in arrivals is a gap and restarts the media clock', () => {
    const t = new StreamTelemetry();
    for (let i = 0; i < 10; i++) t.audio(i * 20, 20, undefined, undefined);
    t.audio(180 + 500, 20, undefined, undefined);
    for (let i = 1; i < 10; i++) t.audio(680 + i * 20, 20, undefined, undefined);
    assert.equal(t.inbound.gaps, 1);
    assert.equal(t.inbound.lateFrames, 0, 'frames after the pause are not all late');
    t.audio(680 + 10 * 20 + 100, 20, undefined, undefined);
    assert.equal(t.inbound.lateFrames, 1, 'jitter of 100 ms is late');
  });

  test('clipped samples and peak', () => {
    const t = new StreamTelemetry();
    const frame = new Int16Array(320);
    frame[3] = 32767;
    frame[9] = -32768;
    frame[10] = 1200;
    t.frame(frame);
    assert.equal(t.inbound.frames, 1);
    assert.equal(t.inbound.clippedSamples, 2);
    assert.equal(t.inbound.peak, 32768);
  });
});

describe('outbound underruns', () => {
  test('audio that resumes after the previous ran out, mid-utterance, is an underrun; after a mark it is not', () => {
    const t = new StreamTelemetry();
    t.audioSent(0, 20);
    t.audioSent(20, 20);
    t.audioSent(45, 20); // within tolerance
    assert.equal(t.outbound.underruns, 0);
    t.audioSent(200, 20); // ran dry at 60
    assert.equal(t.outbound.underruns, 1);
    t.markSent();
    t.audioSent(2000, 20); // a new utterance
    assert.equal(t.outbound.underruns, 1);
    assert.equal(t.queuedMs(2000), 20);
  });
});

describe('paced queue', () => {
  test('audio goes out one frame per frame duration; controls right behind their audio', () => {
    const q = new PacedQueue<string>();
    for (let i = 0; i < 5; i++) q.push({ item: `a${i}`, audioMs: 20 });
    q.push({ item: 'mark', audioMs: 0 });
    const sent: string[] = [];
    const send = (x: string) => sent.push(x);
    const never = () => false;
    q.drainDue(1000, send, never);
    assert.deepEqual(sent, ['a0']);
    q.drainDue(1010, send, never);
    assert.deepEqual(sent, ['a0'], 'not early');
    q.drainDue(1020, send, never);
    q.drainDue(1045, send, never); // a late tick catches up on what was due, no more
    assert.deepEqual(sent, ['a0', 'a1', 'a2']);
    q.drainDue(1080, send, never);
    assert.deepEqual(sent, ['a0', 'a1', 'a2', 'a3', 'a4', 'mark']);
    assert.equal(q.length, 0);
  });

  test('blocked (backpressure) holds audio; clear returns what was queued', () => {
    const q = new PacedQueue<string>();
    q.push({ item: 'a0', audioMs: 20 });
    q.push({ item: 'm', audioMs: 0 });
    const sent: string[] = [];
    q.drainDue(
      0,
      (x) => sent.push(x),
      () => true,
    );
    assert.deepEqual(sent, []);
    assert.equal(q.audioMs, 20);
    assert.deepEqual(q.clear(), ['a0', 'm']);
    assert.equal(q.audioMs, 0);
  });
});

describe('stream end line', () => {
  test('carries the audio each way and the trouble counts, not every counter', () => {
    const t = new StreamTelemetry();
    t.audio(0, 20, 0, undefined);
    t.audio(20, 20, 20, undefined);
    t.audio(140, 20, 100, undefined); // 60 ms of media missing: a gap
    t.audioSent(0, 500.4);
    t.bad('malformed');
    const figures = streamEndFigures(t.inbound, t.outbound);
    assert.deepEqual(figures, {
      in_audio_ms: 60,
      out_audio_ms: 500,
      gaps: 1,
      late_frames: 0,
      underruns: 0,
      bad_messages: 1,
      dropped_messages: 0,
    });
    assert.ok(JSON.stringify(figures).length < 200);
  });
});
