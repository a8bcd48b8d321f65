/**
 * Plivo audio streams against the running gateway over a real WebSocket: the reference start (mu-law 8 kHz,
 * token in extra_headers) and a lenient L16 16 kHz variant (token in the URL, numbers as strings, `played`
 * instead of `playedStream`). Checks playAudio's exact shape, content type, rate and 20 ms chunks, checkpoints,
 * clearAudio, and that marks cleared by clearedAudio are reported dropped. No stop: the socket closes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mulawDecode, mulawEncode, pcm16FromBytes, pcm16ToBytes } from '../../../codecs/index.ts';
import { sine, toneShare } from '../../testing/audio.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  TestClient,
  type TestGateway,
  waitForSummary,
} from '../../testing/harness.ts';

const STREAM_ID = '20170ada-f610-433b-8758-c02a2aab3662';
const CALL_ID = 'b9c2c3a2-4e46-4a87-a2d1-3f4e5a6b7c8d';

type PlayAudio = {
  event: string;
  streamId: string;
  media: { contentType: string; sampleRate: number; payload: string };
};
const played = (c: TestClient) => c.json().filter((m) => m.event === 'playAudio') as PlayAudio[];

describe('Plivo media over a real WebSocket', () => {
  let gw: TestGateway;
  const events: RecordedEvent[] = [];
  before(async () => {
    gw = await startTestGateway({ handlerFactory: recordingEcho(events) });
  });
  after(() => gw.close());

  test('reference start, mu-law 8 kHz: playAudio, checkpoint, playedStream, clearAudio, clearedAudio', async () => {
    events.length = 0;
    const token = gw.mint('call_P1', 'plivo');
    const c = await TestClient.open(gw.url('/media/plivo'));
    c.send({
      event: 'start',
      sequenceNumber: 1,
      start: {
        callId: CALL_ID,
        streamId: STREAM_ID,
        accountId: 'MA0123456789',
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 },
      },
      extra_headers: `userId=12345;sessionId=abc;token=${token}`,
    });
    const ulaw = mulawEncode(sine(8000, 1000, 8000));
    for (let i = 0; i < 50; i++) {
      c.send({
        event: 'media',
        sequenceNumber: i + 2,
        streamId: STREAM_ID,
        media: {
          track: 'inbound',
          timestamp: String(1705312200000 + i * 20),
          chunk: i + 1,
          payload: Buffer.from(ulaw.subarray(i * 160, (i + 1) * 160)).toString('base64'),
        },
      });
    }
    await c.waitFor(() => played(c).length >= 50, 5000, '50 playAudio');
    for (const m of c.json()) {
      assert.deepEqual(Object.keys(m), ['event', 'streamId', 'media']);
      assert.deepEqual(Object.keys(m.media as object), ['contentType', 'sampleRate', 'payload']);
    }
    for (const m of played(c)) {
      assert.equal(m.streamId, STREAM_ID);
      assert.equal(m.media.contentType, 'audio/x-mulaw');
      assert.equal(m.media.sampleRate, 8000);
      assert.equal(Buffer.from(m.media.payload, 'base64').length, 160);
    }
    const echoed = mulawDecode(Buffer.concat(played(c).map((m) => Buffer.from(m.media.payload, 'base64'))));
    assert.ok(toneShare(echoed.subarray(400), 8000, 1000) > 0.97);

    c.send({ event: 'dtmf', streamId: STREAM_ID, dtmf: { digit: '5' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'checkpoint'), 5000, 'checkpoint');
    assert.equal(
      c.received.at(-1)!.text,
      JSON.stringify({ event: 'checkpoint', streamId: STREAM_ID, name: 'dtmf-5-1' }),
    );
    c.send({ event: 'playedStream', streamId: STREAM_ID, name: 'dtmf-5-1' });
    c.send({ event: 'dtmf', streamId: STREAM_ID, dtmf: { digit: '6' } });
    c.send({ event: 'dtmf', streamId: STREAM_ID, dtmf: { digit: '*' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'clearAudio'), 5000, 'clearAudio');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ event: 'clearAudio', streamId: STREAM_ID }));
    c.send({ event: 'clearedAudio', streamId: STREAM_ID });
    c.close();
    await c.closed;
    const summary = await waitForSummary(gw, 'call_P1');

    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.equal(start.ctx.streamId, STREAM_ID);
    assert.equal(start.ctx.carrierCallId, CALL_ID);
    assert.deepEqual(start.ctx.customParameters, { userId: '12345', sessionId: 'abc' });
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [
        { name: 'dtmf-5-1', dropped: false },
        { name: 'dtmf-6-2', dropped: true },
      ],
    );
    const stop = events.at(-1);
    assert.ok(
      stop?.type === 'stop' && stop.end.reason === 'closed',
      'no stop event: the socket closing ends it',
    );
    assert.equal(summary.inbound.frames, 50);
    assert.equal(summary.inbound.gaps, 0, 'epoch-millisecond timestamps 20 ms apart are no gap');
  });

  test('lenient L16 16 kHz: token in the URL, strings for numbers, `played`; bytes come back unchanged', async () => {
    events.length = 0;
    const token = gw.mint('call_P2', 'plivo');
    const c = await TestClient.open(gw.url(`/media/plivo?token=${token}`));
    c.send({
      event: 'start',
      sequenceNumber: '1',
      start: {
        callId: CALL_ID,
        streamId: STREAM_ID,
        mediaFormat: { encoding: 'audio/x-l16', sampleRate: '16000' },
      },
      extra_headers: 'userId=1',
    });
    const tone = sine(16000, 700, 16000);
    for (let i = 0; i < 50; i++) {
      const payload = pcm16ToBytes(tone.subarray(i * 320, (i + 1) * 320)).toString('base64');
      c.send({
        event: 'media',
        sequenceNumber: String(i + 2),
        streamId: STREAM_ID,
        media: { timestamp: String(i * 20), chunk: String(i), payload },
      });
    }
    await c.waitFor(() => played(c).length >= 50, 5000, '50 playAudio');
    for (const m of played(c)) {
      assert.equal(m.media.contentType, 'audio/x-l16');
      assert.equal(m.media.sampleRate, 16000);
      assert.equal(Buffer.from(m.media.payload, 'base64').length, 640);
    }
    const echoed = pcm16FromBytes(
      Buffer.concat(played(c).map((m) => Buffer.from(m.media.payload, 'base64'))),
    );
    assert.deepEqual(echoed, tone);
    c.send({ event: 'dtmf', streamId: STREAM_ID, dtmf: { digit: '9' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'checkpoint'), 5000, 'checkpoint');
    c.send({ event: 'played', streamId: STREAM_ID, name: 'dtmf-9-1' });
    c.close();
    await waitForSummary(gw, 'call_P2');
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [{ name: 'dtmf-9-1', dropped: false }],
    );
  });
});
