/**
 * Exotel voicebot streams against the running gateway over a real WebSocket: both start shapes, PCM16 at the
 * negotiated rate (8 kHz default, 16 kHz via the URL), outbound chunks of exactly 3,200 bytes (multiples of 320,
 * never under 3,200, the one before a mark padded), marks, clear and stop with snake_case ids.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pcm16FromBytes, pcm16ToBytes } from '../../../codecs/index.ts';
import { rms, sine, toneShare } from '../../testing/audio.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  TestClient,
  type TestGateway,
  waitForSummary,
} from '../../testing/harness.ts';

const SID = 'a1b2c3d4e5f6a7b8c9d0';
const CALL_SID = 'ex-call-7f3e';

const mediaOut = (c: TestClient) =>
  c.json().filter((m) => m.event === 'media') as {
    event: string;
    stream_sid: string;
    media: { payload: string };
  }[];
const payloadBytes = (m: { media: { payload: string } }) => Buffer.from(m.media.payload, 'base64');

function sendPcm(c: TestClient, samples: Int16Array, frameSamples: number): void {
  for (let i = 0; i * frameSamples < samples.length; i++) {
    const chunk = samples.subarray(i * frameSamples, (i + 1) * frameSamples);
    c.send({
      event: 'media',
      sequence_number: String(i + 2),
      stream_sid: SID,
      media: {
        chunk: String(i + 1),
        timestamp: String(i * 20),
        payload: pcm16ToBytes(chunk).toString('base64'),
      },
    });
  }
}

describe('Exotel media over a real WebSocket', () => {
  let gw: TestGateway;
  const events: RecordedEvent[] = [];
  before(async () => {
    gw = await startTestGateway({ handlerFactory: recordingEcho(events) });
  });
  after(() => gw.close());

  test('reference shape, 8 kHz slin: 3,200-byte chunks, mark after a padded chunk, clear, stop', async () => {
    events.length = 0;
    const token = gw.mint('call_E1', 'exotel');
    const c = await TestClient.open(gw.url('/media/exotel'));
    c.send({ event: 'connected' });
    c.send({
      event: 'start',
      sequence_number: '1',
      stream_sid: SID,
      start: {
        stream_sid: SID,
        call_sid: CALL_SID,
        account_sid: 'acme1',
        from: '+919800000001',
        to: '+919800000002',
        custom_parameters: { token, k: 'v' },
        media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' },
      },
    });
    const tone = sine(8000, 1000, 8000);
    sendPcm(c, tone, 160);
    await c.waitFor(() => mediaOut(c).length >= 5, 5000, '5 chunks');
    for (const m of c.json()) {
      assert.deepEqual(Object.keys(m), ['event', 'stream_sid', 'media']);
      assert.equal(m.stream_sid, SID);
      assert.deepEqual(Object.keys(m.media as object), ['payload']);
    }
    const chunks = mediaOut(c).map(payloadBytes);
    assert.deepEqual(
      chunks.map((b) => b.length),
      [3200, 3200, 3200, 3200, 3200],
      '1 s of 8 kHz PCM16 = 16,000 bytes = five 3,200-byte chunks',
    );
    const echoed = pcm16FromBytes(Buffer.concat(chunks));
    assert.ok(toneShare(echoed.subarray(400), 8000, 1000) > 0.97, 'PCM16 at 8 kHz, tone preserved');
    assert.ok(Math.abs(20 * Math.log10(rms(echoed.subarray(400)) / rms(tone))) < 1, 'level preserved');

    c.send({ event: 'dtmf', sequence_number: '70', stream_sid: SID, dtmf: { digit: '5', duration: '100' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'mark'), 5000, 'mark');
    const last = c.received.slice(-2).map((m) => m.text);
    const padded = payloadBytes(JSON.parse(last[0]!) as { media: { payload: string } });
    assert.equal(padded.length, 3200, 'the tail before a mark is padded to the 3,200-byte minimum');
    assert.equal(last[1], JSON.stringify({ event: 'mark', stream_sid: SID, mark: { name: 'dtmf-5-1' } }));

    c.send({ event: 'mark', sequence_number: '71', stream_sid: SID, mark: { name: 'dtmf-5-1' } });
    c.send({ event: 'dtmf', sequence_number: '72', stream_sid: SID, dtmf: { digit: '*', duration: '80' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'clear'), 5000, 'clear');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ event: 'clear', stream_sid: SID }));
    c.send({
      event: 'stop',
      sequence_number: '100',
      stop: { call_sid: CALL_SID, account_sid: 'acme1', reason: 'caller_hangup' },
    });
    assert.equal((await c.closed).code, 1000);

    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.equal(start.ctx.callId, 'call_E1');
    assert.equal(start.ctx.carrierCallId, CALL_SID);
    assert.deepEqual(start.ctx.customParameters, { k: 'v' });
    assert.deepEqual(start.ctx.format, { encoding: 'pcm16', sampleRate: 8000, channels: 1 });
    const dtmf = events.find((e) => e.type === 'dtmf');
    assert.ok(dtmf?.type === 'dtmf' && dtmf.digit === '5' && dtmf.durationMs === 100);
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [{ name: 'dtmf-5-1', dropped: false }],
    );
    const stop = events.at(-1);
    assert.ok(stop?.type === 'stop' && stop.end.reason === 'caller_hangup');
    const summary = await waitForSummary(gw, 'call_E1');
    assert.equal(summary.inbound.frames, 50);
    assert.equal(summary.inbound.gaps, 0);
  });

  test('flat start shape, 16 kHz from the URL, token in the URL query', async () => {
    events.length = 0;
    const token = gw.mint('call_E2', 'exotel');
    const c = await TestClient.open(gw.url(`/media/exotel?sample-rate=16000&token=${token}`));
    c.send({
      event: 'start',
      sequence_number: 1,
      stream_sid: SID,
      call_sid: CALL_SID,
      custom_parameters: { lang: 'hi' },
    });
    const tone = sine(16000, 1500, 16000);
    sendPcm(c, tone, 320);
    await c.waitFor(() => mediaOut(c).length >= 10, 5000, '10 chunks');
    const chunks = mediaOut(c).map(payloadBytes);
    assert.deepEqual(
      chunks.map((b) => b.length),
      new Array(10).fill(3200),
      '1 s of 16 kHz PCM16 = 32,000 bytes = ten 3,200-byte chunks',
    );
    const echoed = pcm16FromBytes(Buffer.concat(chunks));
    assert.deepEqual(echoed, tone, 'at 16 kHz nothing is resampled: every byte comes back as it went');
    c.close();
    const summary = await waitForSummary(gw, 'call_E2');
    assert.deepEqual(summary.format, { encoding: 'pcm16', sampleRate: 16000, channels: 1 });
    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.deepEqual(start.ctx.customParameters, { lang: 'hi' });
  });

  test('mu-law when media_format says so: chunks stay 3,200 bytes', async () => {
    const token = gw.mint('call_E3', 'exotel');
    const c = await TestClient.open(gw.url('/media/exotel'));
    c.send({
      event: 'start',
      stream_sid: SID,
      start: {
        call_sid: CALL_SID,
        custom_parameters: { token },
        media_format: { encoding: 'audio/x-mulaw', sample_rate: 8000 },
      },
    });
    const ulaw = Buffer.alloc(160 * 25, 0xff);
    for (let i = 0; i < 25; i++) {
      c.send({
        event: 'media',
        stream_sid: SID,
        media: {
          chunk: i + 1,
          timestamp: i * 20,
          payload: ulaw.subarray(i * 160, (i + 1) * 160).toString('base64'),
        },
      });
    }
    c.send({ event: 'dtmf', stream_sid: SID, dtmf: { digit: '1' } });
    await c.waitFor(() => c.json().some((m) => m.event === 'mark'), 5000, 'mark');
    const sizes = mediaOut(c).map((m) => payloadBytes(m).length);
    assert.deepEqual(
      sizes,
      [3200, 3200],
      '4,000 bytes of mu-law: one full chunk, then the rest padded to 3,200',
    );
    c.close();
    await c.closed;
  });
});
