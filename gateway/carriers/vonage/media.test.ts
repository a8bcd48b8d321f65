/**
 * Vonage voice WebSocket against the running gateway: `websocket:connected` with the content type and flattened
 * headers, binary 20 ms L16 frames both ways (exactly 640 bytes at 16 kHz, 320 at 8 kHz), outbound paced in
 * real time rather than sent in a burst, notify -> websocket:notify, clear -> websocket:cleared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pcm16FromBytes, pcm16ToBytes } from '../../../codecs/index.ts';
import { sine, toneShare } from '../../testing/audio.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  TestClient,
  type TestGateway,
  waitForSummary,
} from '../../testing/harness.ts';

const UUID = 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab';

describe('Vonage media over a real WebSocket', () => {
  let gw: TestGateway;
  const events: RecordedEvent[] = [];
  before(async () => {
    gw = await startTestGateway({ handlerFactory: recordingEcho(events) });
  });
  after(() => gw.close());

  test('16 kHz: binary 640-byte frames, paced, byte-exact echo, notify and clear', async () => {
    events.length = 0;
    const token = gw.mint('call_V1', 'vonage');
    const c = await TestClient.open(gw.url(`/media/vonage?token=${token}`));
    c.send({
      event: 'websocket:connected',
      'content-type': 'audio/l16;rate=16000',
      uuid: UUID,
      customer: 'acme',
    });
    const tone = sine(16000, 440, 16000);
    const sentAt = performance.now();
    for (let i = 0; i < 50; i++) c.sendBinary(pcm16ToBytes(tone.subarray(i * 320, (i + 1) * 320)));
    const arrivals: number[] = [];
    c.ws.on('message', (_d, isBinary) => {
      if (isBinary) arrivals.push(performance.now());
    });
    await c.waitFor(() => c.binaries().length >= 50, 5000, '50 frames');
    for (const frame of c.binaries()) assert.equal(frame.length, 640, 'exactly 20 ms at 16 kHz');
    assert.deepEqual(
      pcm16FromBytes(Buffer.concat(c.binaries())),
      tone,
      'no resampling at 16 kHz: byte-exact',
    );
    const span = Math.max(...arrivals) - sentAt;
    assert.ok(
      span >= 600,
      `1 s of audio sent in a burst came back paced over ${span.toFixed(0)} ms, not at once`,
    );

    c.send({ event: 'websocket:dtmf', digit: '5', duration: 260 });
    await c.waitFor(() => c.json().some((m) => m.action === 'notify'), 5000, 'notify');
    assert.equal(
      c.received.at(-1)!.text,
      JSON.stringify({ action: 'notify', payload: { name: 'dtmf-5-1' } }),
    );
    c.send({ event: 'websocket:notify', payload: { name: 'dtmf-5-1' } });
    c.send({ event: 'websocket:dtmf', dtmf: { digits: '*', duration: 100 } });
    await c.waitFor(() => c.json().some((m) => m.action === 'clear'), 5000, 'clear');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ action: 'clear' }));
    c.send({ event: 'websocket:cleared' });
    c.close();
    const summary = await waitForSummary(gw, 'call_V1');
    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.equal(start.ctx.carrierCallId, UUID);
    assert.deepEqual(start.ctx.customParameters, { uuid: UUID, customer: 'acme' });
    assert.deepEqual(start.ctx.format, { encoding: 'pcm16', sampleRate: 16000, channels: 1 });
    const dtmf = events
      .filter((e) => e.type === 'dtmf')
      .map((e) => e.type === 'dtmf' && [e.digit, e.durationMs]);
    assert.deepEqual(dtmf, [
      ['5', 260],
      ['*', 100],
    ]);
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [{ name: 'dtmf-5-1', dropped: false }],
    );
    assert.equal(summary.inbound.frames, 50);
    assert.equal(summary.outbound.audioMessages, 50);
  });

  test('8 kHz, token in the connected headers: 320-byte frames, last one padded before notify', async () => {
    events.length = 0;
    const token = gw.mint('call_V2', 'vonage');
    const c = await TestClient.open(gw.url('/media/vonage'));
    c.sendBinary(new Uint8Array(320));
    c.send({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=8000', token });
    const tone = sine(8000, 1000, 4000);
    for (let i = 0; i < 25; i++) c.sendBinary(pcm16ToBytes(tone.subarray(i * 160, (i + 1) * 160)));
    c.send({ event: 'websocket:dtmf', digit: '1', duration: 100 });
    await c.waitFor(() => c.json().some((m) => m.action === 'notify'), 5000, 'notify');
    const frames = c.binaries();
    for (const frame of frames)
      assert.equal(frame.length, 320, 'exactly 20 ms at 8 kHz, the last one padded');
    assert.ok(frames.length >= 25 && frames.length <= 27, `${frames.length} frames`);
    const echoed = pcm16FromBytes(Buffer.concat(frames));
    assert.ok(toneShare(echoed.subarray(400, 4000), 8000, 1000) > 0.97);
    c.close();
    const summary = await waitForSummary(gw, 'call_V2');
    assert.deepEqual(summary.inbound.bad, { media_before_start: 1 });
    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.deepEqual(start.ctx.customParameters, {}, 'the token header is not passed on');
  });
});
