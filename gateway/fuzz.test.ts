/**
 * Bad input never takes the gateway down: random text, random JSON built from every protocol's event names
 * with random field values, random binary, weird formats and payloads after a valid start, floods and endless
 * garbage, on every route. After each case a separate, healthy Twilio stream must still echo, and at the end the
 * gateway reports consistent stats. Floods and garbage close only their own stream, with 4012 and 4011.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { CarrierName } from './carriers/types.ts';
import { CLOSE } from './close-codes.ts';
import { startTestGateway, TestClient, type TestGateway } from './testing/harness.ts';

const SID = 'MZfuzz000000000000000000000000000';
const silence = Buffer.alloc(160, 0xff).toString('base64');

const EVENTS = [
  'connected',
  'start',
  'media',
  'dtmf',
  'mark',
  'stop',
  'clear',
  'playedStream',
  'played',
  'clearedAudio',
  'checkpoint',
  'websocket:connected',
  'websocket:dtmf',
  'websocket:notify',
  'websocket:cleared',
  'hello',
  'ack',
  'bye',
  'cleared',
  '__proto__',
  'constructor',
];

const weirdRate = fc.oneof(
  fc.constantFrom(8000, 16000, 24000, 44100, 48000, 11025, 0, -1, 1e12, Number.NaN),
  fc.constantFrom('8000', '16000', 'abc', '', null),
);
const weirdEncoding = fc.constantFrom(
  'audio/x-mulaw',
  'audio/x-l16',
  'audio/x-raw',
  'audio/x-alaw',
  'opus',
  'mp3',
  '',
  42,
);
const payload = fc.oneof(
  fc.uint8Array({ maxLength: 3000 }).map((b) => Buffer.from(b).toString('base64')),
  fc.string(),
  fc.integer(),
);

/** A message as sent: text or binary. */
type Wire = { text: string } | { binary: Uint8Array };

const jsonMessage: fc.Arbitrary<Wire> = fc
  .record(
    {
      event: fc.constantFrom(...EVENTS),
      type: fc.constantFrom(...EVENTS),
      streamSid: fc.oneof(fc.constant(SID), fc.string(), fc.integer()),
      media: fc.oneof(
        fc.record({ payload, timestamp: fc.oneof(fc.string(), fc.integer()), chunk: fc.anything() }),
        fc.anything(),
      ),
      start: fc.oneof(
        fc.record({
          streamSid: fc.string(),
          mediaFormat: fc.record({
            encoding: weirdEncoding,
            sampleRate: weirdRate,
            channels: fc.constantFrom(1, 2, '1'),
          }),
          customParameters: fc.dictionary(fc.string(), fc.anything()),
        }),
        fc.anything(),
      ),
      media_format: fc.record({ encoding: weirdEncoding, sample_rate: weirdRate }),
      'content-type': fc.constantFrom(
        'audio/l16;rate=16000',
        'audio/l16;rate=8000',
        'audio/l16;rate=11025',
        'text/plain',
      ),
      codec: fc.constantFrom('pcm16', 'opus', 'speex'),
      sample_rate: weirdRate,
      dtmf: fc.anything(),
      mark: fc.anything(),
      name: fc.anything(),
      digit: fc.anything(),
      payload: fc.anything(),
    },
    { requiredKeys: [] },
  )
  .map((value) => ({ text: JSON.stringify(value) }));

const wireMessage: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 4, arbitrary: jsonMessage },
  { weight: 1, arbitrary: fc.string({ maxLength: 500 }).map((text) => ({ text })) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 4000 }).map((binary) => ({ binary })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { text: '{' },
      { text: 'null' },
      { text: '[]' },
      { text: '"x"' },
      { text: '1e999' },
    ),
  },
);

const ROUTES: CarrierName[] = ['twilio', 'exotel', 'plivo', 'vonage', 'web'];

/** A valid start for each route (so the garbage after it reaches the live state's parsing too). */
function validStart(carrier: CarrierName, token: string): Wire {
  const json = (value: unknown): Wire => ({ text: JSON.stringify(value) });
  switch (carrier) {
    case 'twilio':
      return json({ event: 'start', streamSid: SID, start: { streamSid: SID, customParameters: { token } } });
    case 'exotel':
      return json({ event: 'start', stream_sid: 's', start: { custom_parameters: { token } } });
    case 'plivo':
      return json({
        event: 'start',
        start: { streamId: 's', callId: 'c', mediaFormat: { encoding: 'audio/x-l16', sampleRate: 16000 } },
        extra_headers: `token=${token}`,
      });
    case 'vonage':
      return json({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=16000', token });
    case 'web':
      return json({ type: 'hello', codec: token.length % 2 === 0 ? 'opus' : 'pcm16', sample_rate: 16000 });
  }
}

describe('fuzzing the gateway', () => {
  let gw: TestGateway;
  let control: TestClient;

  async function controlEchoes(): Promise<void> {
    const count = () => control.json().filter((m) => m.event === 'media').length;
    const before = count();
    control.send({ event: 'media', streamSid: SID, media: { payload: silence } });
    await control.waitFor(() => count() > before, 5000, 'control echo');
  }

  before(async () => {
    gw = await startTestGateway();
    control = await TestClient.open(gw.url('/media/twilio'));
    control.send({
      event: 'start',
      streamSid: SID,
      start: { streamSid: SID, customParameters: { token: gw.mint('call_CTRL', 'twilio') } },
    });
    await controlEchoes();
  });
  after(() => gw.close());

  test('random messages on every route, with and without a valid start first', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.boolean(),
        fc.array(wireMessage, { maxLength: 40 }),
        async (carrier, started, messages) => {
          const callId = `call_F${n++}`;
          const token = gw.mint(callId, carrier);
          const path = carrier === 'web' ? `/web/${callId}?token=${token}` : `/media/${carrier}`;
          const c = await TestClient.open(gw.url(path));
          const all = started ? [validStart(carrier, token), ...messages] : messages;
          for (const m of all) {
            if (c.ws.readyState !== c.ws.OPEN) break;
            if ('text' in m) c.ws.send(m.text);
            else c.ws.send(m.binary, { binary: true });
          }
          c.close();
          await c.closed;
          await controlEchoes();
        },
      ),
      { numRuns: 60 },
    );
    const res = await fetch(gw.http('/healthz'));
    assert.equal(res.status, 200);
  });

  test('a flood of frames is capped and then closed (4012); other streams keep echoing', async () => {
    const flood = await TestClient.open(gw.url('/media/twilio'));
    flood.send({
      event: 'start',
      streamSid: SID,
      start: { streamSid: SID, customParameters: { token: gw.mint('call_FLOOD', 'twilio') } },
    });
    const frame = JSON.stringify({ event: 'media', streamSid: SID, media: { payload: silence } });
    for (let i = 0; i < 3000; i++) flood.ws.send(frame);
    assert.deepEqual(await flood.closed, { code: CLOSE.rate_limited, reason: 'rate_limited' });
    await controlEchoes();
    const summary = gw.gateway.stats().recent.find((s) => s.callId === 'call_FLOOD');
    assert.ok(summary && summary.inbound.rateLimited >= 500);
    assert.ok(
      summary.inbound.frames < 1000,
      `most of the flood was skipped (${summary.inbound.frames} got through)`,
    );

    const binaryFlood = await TestClient.open(
      gw.url(`/media/vonage?token=${gw.mint('call_FLOOD2', 'vonage')}`),
    );
    binaryFlood.send({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=16000' });
    const pcm = new Uint8Array(640);
    for (let i = 0; i < 3000; i++) binaryFlood.ws.send(pcm, { binary: true });
    assert.deepEqual(await binaryFlood.closed, { code: CLOSE.rate_limited, reason: 'rate_limited' });
    await controlEchoes();
  });

  test('endless garbage is skipped and counted, then closed (4011)', async () => {
    const c = await TestClient.open(gw.url('/media/exotel'));
    for (let i = 0; i < 100; i++) c.ws.send(`garbage ${i}`);
    assert.deepEqual(await c.closed, { code: CLOSE.too_many_bad_messages, reason: 'too_many_bad_messages' });
    await controlEchoes();
  });

  test('after all that, the control stream is the only one open and its telemetry is clean', async () => {
    await controlEchoes();
    const stats = gw.gateway.stats();
    assert.deepEqual(
      stats.streams.map((s) => s.callId),
      ['call_CTRL'],
    );
    assert.equal(stats.streams[0]!.inbound.badMessages, 0);
    const adapterThrew = gw.logLines.filter((line) => line.includes('adapter failed on a message'));
    assert.deepEqual(adapterThrew, [], 'adapters turn bad input into events; they never throw');
    const handlerFailed = gw.logLines.filter((line) => line.includes('media handler failed'));
    assert.deepEqual(handlerFailed, [], 'garbage never reaches the handler as an exception');
  });
});
