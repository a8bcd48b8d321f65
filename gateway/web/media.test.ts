/**
 * The browser protocol (PROTOCOL.md) against the running gateway with a plain WebSocket client: hello/ready,
 * PCM16 16 kHz frames echoed byte for byte, mark/ack, clear/cleared, dtmf, bye; audio without a hello; Opus
 * when the hello asks for it; a hello the server cannot take; call events to the browser, and how an ended
 * call's refused token is answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { OpusCodec, pcm16FromBytes, pcm16ToBytes } from '../../codecs/index.ts';
import type { MediaHandlerFactory } from '../media-handler.ts';
import { concat, sine, toneShare } from '../testing/audio.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  TestClient,
  type TestGateway,
  waitForSummary,
} from '../testing/harness.ts';

describe('browser web calls over a real WebSocket', () => {
  let gw: TestGateway;
  const events: RecordedEvent[] = [];
  before(async () => {
    gw = await startTestGateway({ handlerFactory: recordingEcho(events) });
  });
  after(() => gw.close());

  test('hello, ready, PCM16 echo byte for byte, mark/ack, clear/cleared, bye', async () => {
    events.length = 0;
    const token = gw.mint('call_W1', 'web');
    const c = await TestClient.open(gw.url(`/web/call_W1?token=${token}&lang=en`));
    c.send({ type: 'hello', codec: 'pcm16', sample_rate: 16000 });
    await c.waitFor(() => c.json().some((m) => m.type === 'ready'), 5000, 'ready');
    const ready = c.json()[0]!;
    assert.deepEqual(Object.keys(ready), [
      'type',
      'call_id',
      'stream_id',
      'codec',
      'sample_rate',
      'frame_ms',
    ]);
    assert.equal(ready.call_id, 'call_W1');
    assert.equal(ready.codec, 'pcm16');
    assert.equal(ready.sample_rate, 16000);
    assert.equal(ready.frame_ms, 20);

    const tone = sine(16000, 440, 16000);
    for (let i = 0; i < 50; i++) c.sendBinary(pcm16ToBytes(tone.subarray(i * 320, (i + 1) * 320)));
    await c.waitFor(() => c.binaries().length >= 50, 5000, '50 frames');
    for (const frame of c.binaries()) assert.equal(frame.length, 640);
    assert.deepEqual(pcm16FromBytes(Buffer.concat(c.binaries())), tone);

    c.send({ type: 'dtmf', digit: '3' });
    await c.waitFor(() => c.json().some((m) => m.type === 'mark'), 5000, 'mark');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ type: 'mark', name: 'dtmf-3-1' }));
    c.send({ type: 'ack', name: 'dtmf-3-1' });
    c.send({ type: 'dtmf', digit: '*' });
    await c.waitFor(() => c.json().some((m) => m.type === 'clear'), 5000, 'clear');
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ type: 'clear' }));
    c.send({ type: 'cleared' });
    c.send({ type: 'bye' });
    const closed = await c.closed;
    assert.equal(closed.code, 1000);
    assert.equal(c.received.at(-1)!.text, JSON.stringify({ type: 'bye', reason: 'bye' }));

    const start = events.find((e) => e.type === 'start');
    assert.ok(start?.type === 'start');
    assert.equal(start.ctx.callId, 'call_W1');
    assert.equal(start.ctx.streamId, ready.stream_id);
    assert.deepEqual(start.ctx.customParameters, { lang: 'en' });
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [{ name: 'dtmf-3-1', dropped: false }],
    );
    const stop = events.at(-1);
    assert.ok(stop?.type === 'stop' && stop.end.reason === 'bye');
  });

  test('audio without a hello starts the stream as PCM16 16 kHz', async () => {
    const token = gw.mint('call_W2', 'web');
    const c = await TestClient.open(gw.url(`/web/call_W2?token=${token}`));
    const tone = sine(16000, 1000, 3200);
    for (let i = 0; i < 10; i++) c.sendBinary(pcm16ToBytes(tone.subarray(i * 320, (i + 1) * 320)));
    await c.waitFor(() => c.binaries().length >= 10, 5000, '10 frames');
    assert.equal(c.json()[0]!.type, 'ready', 'ready comes before any audio');
    assert.deepEqual(pcm16FromBytes(Buffer.concat(c.binaries())), tone, 'frames sent before ready are kept');
    c.close();
    await waitForSummary(gw, 'call_W2');
  });

  test('Opus both ways when the hello asks for it', async () => {
    const token = gw.mint('call_W3', 'web');
    const c = await TestClient.open(gw.url(`/web/call_W3?token=${token}`));
    c.send({ type: 'hello', codec: 'opus', sample_rate: 16000 });
    await c.waitFor(() => c.json().some((m) => m.type === 'ready'), 5000, 'ready');
    assert.equal(c.json()[0]!.codec, 'opus');
    const client = new OpusCodec(16000);
    const tone = sine(16000, 600, 16000);
    for (let i = 0; i < 50; i++) c.sendBinary(client.encode(tone.subarray(i * 320, (i + 1) * 320)));
    await c.waitFor(() => c.binaries().length >= 50, 5000, '50 packets');
    const decoded = concat(c.binaries().map((packet) => client.decode(packet)));
    assert.equal(decoded.length, 16000, 'each packet is one 20 ms frame');
    assert.ok(toneShare(decoded.subarray(3200), 16000, 600) > 0.9, 'the tone survives two Opus round trips');
    c.close();
    await waitForSummary(gw, 'call_W3');
  });

  test('a hello for a codec the server does not take closes with 4013', async () => {
    const token = gw.mint('call_W4', 'web');
    const c = await TestClient.open(gw.url(`/web/call_W4?token=${token}`));
    c.send({ type: 'hello', codec: 'speex', sample_rate: 16000 });
    assert.deepEqual(await c.closed, { code: 4013, reason: 'unsupported_format' });
  });
});

describe('call events to the browser', () => {
  let gw: TestGateway;
  /** Whether each stream's output could send events, by carrier. */
  const canSend: Array<[string, boolean]> = [];
  const handlerFactory: MediaHandlerFactory = (ctx) => {
    const echo = recordingEcho([])(ctx);
    return {
      ...echo,
      onStart() {
        canSend.push([ctx.carrier, ctx.output.sendEvent !== undefined]);
        ctx.output.sendEvent?.({ type: 'call.status', status: 'in_progress', ended_reason: null });
      },
    };
  };
  const ended = { type: 'call.status', status: 'no_answer', ended_reason: 'customer-did-not-answer' };
  before(async () => {
    gw = await startTestGateway({
      handlerFactory,
      endedCallEvent: async (callId) => (callId === 'call_ENDED' ? ended : undefined),
    });
  });
  after(() => gw.close());

  test('a handler tells the browser about its call in text messages; carrier streams have no such channel', async () => {
    const token = gw.mint('call_E1', 'web');
    const c = await TestClient.open(gw.url(`/web/call_E1?token=${token}`));
    c.send({ type: 'hello' });
    await c.waitFor(() => c.json().some((m) => m.type === 'call.status'), 5000, 'call.status');
    assert.deepEqual(
      c.json().map((m) => m.type),
      ['ready', 'call.status'],
    );
    assert.deepEqual(c.json()[1], { type: 'call.status', status: 'in_progress', ended_reason: null });
    c.send({ type: 'bye' });
    await c.closed;

    const twilio = await TestClient.open(gw.url('/media/twilio'));
    twilio.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    twilio.send({
      event: 'start',
      sequenceNumber: '1',
      streamSid: 'MZ0123456789abcdef0123456789abcdef',
      start: {
        accountSid: 'AC0123456789abcdef0123456789abcdef',
        streamSid: 'MZ0123456789abcdef0123456789abcdef',
        callSid: 'CA0123456789abcdef0123456789abcdef',
        tracks: ['inbound'],
        customParameters: { token: gw.mint('call_E2', 'twilio') },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    const deadline = Date.now() + 5000;
    while (canSend.length < 2 && Date.now() < deadline) await sleep(10);
    twilio.close();
    assert.deepEqual(canSend, [
      ['web', true],
      ['twilio', false],
    ]);
  });

  test("a used token of an ended call is answered with the call's end, then 4005; a live call's is not", async () => {
    const token = gw.mint('call_ENDED', 'web');
    const first = await TestClient.open(gw.url(`/web/call_ENDED?token=${token}`));
    first.send({ type: 'hello' });
    await first.waitFor(() => first.json().some((m) => m.type === 'ready'), 5000, 'ready');
    first.send({ type: 'bye' });
    await first.closed;

    const again = await TestClient.open(gw.url(`/web/call_ENDED?token=${token}`));
    assert.deepEqual(await again.closed, { code: 4005, reason: 'token_reused' });
    assert.deepEqual(again.json(), [ended]);

    const live = gw.mint('call_E3', 'web');
    const joined = await TestClient.open(gw.url(`/web/call_E3?token=${live}`));
    joined.send({ type: 'hello' });
    await joined.waitFor(() => joined.json().some((m) => m.type === 'ready'), 5000, 'ready');
    const second = await TestClient.open(gw.url(`/web/call_E3?token=${live}`));
    assert.deepEqual(await second.closed, { code: 4005, reason: 'token_reused' });
    assert.deepEqual(second.json(), []);
    joined.close();
  });
});
