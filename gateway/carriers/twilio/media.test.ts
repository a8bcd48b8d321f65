/**
 * Twilio Media Streams against the running gateway over a real WebSocket: the reference's exact messages and
 * lenient variants in; every byte sent back checked (only media/mark/clear, 20 ms mu-law 8 kHz chunks that
 * carry the caller's tone back, marks after their audio, clear), plus acks as the handler sees them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mulawDecode, mulawEncode } from '../../../codecs/index.ts';
import { rms, sine, toneShare } from '../../testing/audio.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  TestClient,
  type TestGateway,
  waitForSummary,
} from '../../testing/harness.ts';

const SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const CALL_SID = 'CA5a2f2a0a6e0e4d3f8b8f4a7c0f1a2b3c';

function startMessage(token: string, extra: Record<string, string> = {}) {
  return {
    event: 'start',
    sequenceNumber: '1',
    streamSid: SID,
    start: {
      accountSid: 'AC0123456789abcdef0123456789abcdef',
      streamSid: SID,
      callSid: CALL_SID,
      tracks: ['inbound'],
      customParameters: { token, ...extra },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  };
}

function mediaMessages(ulaw: Uint8Array, firstSeq: number): object[] {
  const out: object[] = [];
  for (let i = 0; i * 160 < ulaw.length; i++) {
    out.push({
      event: 'media',
      sequenceNumber: String(firstSeq + i),
      streamSid: SID,
      media: {
        track: 'inbound',
        chunk: String(i + 1),
        timestamp: String(i * 20),
        payload: Buffer.from(ulaw.subarray(i * 160, (i + 1) * 160)).toString('base64'),
      },
    });
  }
  return out;
}

const mediaOut = (c: TestClient) =>
  c.json().filter((m) => m.event === 'media') as { media: { payload: string } }[];

describe('Twilio media over a real WebSocket', () => {
  let gw: TestGateway;
  const events: RecordedEvent[] = [];
  before(async () => {
    gw = await startTestGateway({ handlerFactory: recordingEcho(events) });
  });
  after(() => gw.close());

  test('reference messages: echo as 20 ms mu-law 8 kHz, dtmf -> mark, acks, clear, stop', async () => {
    events.length = 0;
    const token = gw.mint('call_T1', 'twilio');
    const c = await TestClient.open(gw.url('/media/twilio'));
    c.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    c.send(startMessage(token, { campaign: 'c1' }));
    const tone = sine(8000, 1000, 8000);
    for (const m of mediaMessages(mulawEncode(tone), 2)) c.send(m);
    await c.waitFor(() => mediaOut(c).length >= 50, 5000, '50 media messages');

    for (const m of c.json()) {
      assert.deepEqual(Object.keys(m), ['event', 'streamSid', 'media']);
      assert.equal(m.streamSid, SID);
      assert.deepEqual(Object.keys(m.media as object), ['payload']);
      assert.equal(Buffer.from((m.media as { payload: string }).payload, 'base64').length, 160);
    }
    assert.equal(mediaOut(c).length, 50, 'one 20 ms chunk back per 20 ms in');
    const echoed = mulawDecode(Buffer.concat(mediaOut(c).map((m) => Buffer.from(m.media.payload, 'base64'))));
    const steady = echoed.subarray(400);
    assert.ok(toneShare(steady, 8000, 1000) > 0.97, 'the 1 kHz tone comes back at 1 kHz (8 kHz rate)');
    const gainDb = 20 * Math.log10(rms(steady) / rms(tone.subarray(400)));
    assert.ok(Math.abs(gainDb) < 1, `level preserved (${gainDb.toFixed(2)} dB)`);

    c.send({
      event: 'dtmf',
      sequenceNumber: '60',
      streamSid: SID,
      dtmf: { track: 'inbound_track', digit: '1' },
    });
    await c.waitFor(() => c.json().some((m) => m.event === 'mark'), 5000, 'mark');
    const texts = c.received.map((m) => m.text);
    const markIndex = texts.indexOf(
      JSON.stringify({ event: 'mark', streamSid: SID, mark: { name: 'dtmf-1-1' } }),
    );
    assert.equal(markIndex, texts.length - 1, 'the mark is exact and comes last');
    const tail = JSON.parse(texts[markIndex - 1]!) as { event: string; media: { payload: string } };
    assert.equal(tail.event, 'media', 'the resampler tail is flushed before the mark');
    assert.ok(Buffer.from(tail.media.payload, 'base64').length <= 160);

    c.send({ event: 'mark', sequenceNumber: '61', streamSid: SID, mark: { name: 'dtmf-1-1' } });
    c.send({
      event: 'dtmf',
      sequenceNumber: '62',
      streamSid: SID,
      dtmf: { track: 'inbound_track', digit: '2' },
    });
    c.send({
      event: 'dtmf',
      sequenceNumber: '63',
      streamSid: SID,
      dtmf: { track: 'inbound_track', digit: '*' },
    });
    await c.waitFor(() => c.json().some((m) => m.event === 'clear'), 5000, 'clear');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ event: 'clear', streamSid: SID }));
    c.send({ event: 'mark', sequenceNumber: '64', streamSid: SID, mark: { name: 'dtmf-2-2' } });
    c.send({
      event: 'stop',
      sequenceNumber: '65',
      streamSid: SID,
      stop: { accountSid: 'AC..', callSid: CALL_SID },
    });
    assert.equal((await c.closed).code, 1000);

    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.equal(start.ctx.callId, 'call_T1');
    assert.equal(start.ctx.streamId, SID);
    assert.equal(start.ctx.carrierCallId, CALL_SID);
    assert.deepEqual(start.ctx.customParameters, { campaign: 'c1' }, 'the token is not among the parameters');
    assert.deepEqual(start.ctx.format, { encoding: 'mulaw', sampleRate: 8000, channels: 1 });
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [
        { name: 'dtmf-1-1', dropped: false },
        { name: 'dtmf-2-2', dropped: true },
      ],
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'dtmf').map((e) => e.type === 'dtmf' && e.digit),
      ['1', '2', '*'],
    );
    const stop = events.at(-1);
    assert.ok(stop?.type === 'stop' && stop.end.reason === 'stop' && stop.end.closeCode === 1000);

    for (const m of c.json())
      assert.ok(['media', 'mark', 'clear'].includes(m.event as string), `only media/mark/clear`);
    const summary = gw.gateway.stats().recent.find((s) => s.streamId === SID);
    assert.ok(summary);
    assert.equal(summary.inbound.frames, 50);
    assert.equal(summary.inbound.gaps, 0);
    assert.equal(summary.inbound.badMessages, 0);
    assert.equal(summary.outbound.marks, 2);
    assert.equal(summary.outbound.clears, 1);
    assert.equal(summary.outbound.acks, 2);
    assert.equal(summary.outbound.droppedAcks, 1);
    assert.equal(summary.closeCode, 1000);
  });

  test('lenient: numbers as numbers, no connected, stream sid only inside start, media before start skipped', async () => {
    events.length = 0;
    const token = gw.mint('call_T2', 'twilio');
    const c = await TestClient.open(gw.url('/media/twilio'));
    const ulaw = mulawEncode(sine(8000, 600, 1600));
    c.send({ event: 'media', sequenceNumber: 1, streamSid: SID, media: { payload: 'AAAA' } });
    c.send({ event: 'gibberish' });
    const start = startMessage(token) as {
      streamSid?: string;
      sequenceNumber: unknown;
      start: Record<string, unknown>;
    };
    delete start.streamSid;
    start.sequenceNumber = 2;
    start.start.mediaFormat = { encoding: 'audio/x-mulaw', sampleRate: '8000', channels: '1' };
    c.send(start);
    for (let i = 0; i < 10; i++) {
      const payload = Buffer.from(ulaw.subarray(i * 160, (i + 1) * 160)).toString('base64');
      c.send({
        event: 'media',
        sequenceNumber: i + 3,
        media: { track: 'inbound', chunk: i + 1, timestamp: i * 20, payload },
      });
    }
    await c.waitFor(() => mediaOut(c).length >= 10, 5000, '10 media messages');
    c.send({ event: 'stop', sequenceNumber: 20, stop: { callSid: CALL_SID } });
    await c.closed;
    const summary = gw.gateway.stats().recent.find((s) => s.callId === 'call_T2');
    assert.ok(summary);
    assert.equal(summary.inbound.frames, 10);
    assert.deepEqual(summary.inbound.bad, { media_before_start: 1, unknown_event: 1 });
  });

  test('gaps in carrier timestamps are counted', async () => {
    const token = gw.mint('call_T3', 'twilio');
    const c = await TestClient.open(gw.url('/media/twilio'));
    c.send(startMessage(token));
    const payload = Buffer.from(mulawEncode(sine(8000, 500, 160))).toString('base64');
    for (const [i, ts] of [0, 20, 40, 200, 220].entries()) {
      c.send({
        event: 'media',
        streamSid: SID,
        media: { track: 'inbound', chunk: String(i + 1), timestamp: String(ts), payload },
      });
    }
    await c.waitFor(() => mediaOut(c).length >= 5, 5000, 'echo');
    c.close();
    await c.closed;
    const summary = await waitForSummary(gw, 'call_T3');
    assert.equal(summary.inbound.gaps, 1);
    assert.equal(summary.inbound.gapMs, 140);
  });
});
