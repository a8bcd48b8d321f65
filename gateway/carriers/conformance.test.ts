/**
 * One suite every media adapter passes (carrier protocols and the browser's), at the adapter level with no
 * socket: exact 320-sample frames whatever the carrier's rate and message size, the token taken out of the
 * parameters, chunk sizes and durations of outbound audio, marks after their audio, clear dropping what is held,
 * and no exception on any input (fast-check).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { mulawEncode, pcm16ToBytes } from '../../codecs/index.ts';
import { sine } from '../testing/audio.ts';
import { MEDIA_ADAPTERS } from './index.ts';
import type { AdapterContext, CarrierEvent, CarrierMedia, CarrierName } from './types.ts';

interface Script {
  readonly carrier: CarrierName;
  readonly query?: string;
  /** The start message (JSON text) carrying `token` in-band where the protocol can. */
  start(token: string): string;
  /** One inbound media message holding `samples` at the carrier's rate. */
  media(samples: Int16Array): { data: Uint8Array; binary: boolean };
  readonly rate: number;
  readonly inBandToken: boolean;
  /** Outbound chunk size in bytes (before base64), or undefined when it is not fixed (flushes). */
  readonly chunkBytes: number;
}

const json = (value: unknown) => ({ data: Buffer.from(JSON.stringify(value)), binary: false });
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const SCRIPTS: Script[] = [
  {
    carrier: 'twilio',
    rate: 8000,
    inBandToken: true,
    chunkBytes: 160,
    start: (token) =>
      JSON.stringify({
        event: 'start',
        streamSid: 'MZ1',
        start: { streamSid: 'MZ1', customParameters: { token, a: '1' } },
      }),
    media: (s) => json({ event: 'media', streamSid: 'MZ1', media: { payload: b64(mulawEncode(s)) } }),
  },
  {
    carrier: 'exotel',
    rate: 16000,
    query: 'sample-rate=16000',
    inBandToken: true,
    chunkBytes: 3200,
    start: (token) =>
      JSON.stringify({ event: 'start', stream_sid: 's1', start: { custom_parameters: { token, a: '1' } } }),
    media: (s) => json({ event: 'media', stream_sid: 's1', media: { payload: b64(pcm16ToBytes(s)) } }),
  },
  {
    carrier: 'plivo',
    rate: 8000,
    inBandToken: true,
    chunkBytes: 320,
    start: (token) =>
      JSON.stringify({
        event: 'start',
        start: { streamId: 'p1', callId: 'c1', mediaFormat: { encoding: 'audio/x-l16', sampleRate: 8000 } },
        extra_headers: `a=1;token=${token}`,
      }),
    media: (s) => json({ event: 'media', streamId: 'p1', media: { payload: b64(pcm16ToBytes(s)) } }),
  },
  {
    carrier: 'vonage',
    rate: 16000,
    inBandToken: true,
    chunkBytes: 640,
    start: (token) =>
      JSON.stringify({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=16000', token, a: '1' }),
    media: (s) => ({ data: pcm16ToBytes(s), binary: true }),
  },
  {
    carrier: 'web',
    rate: 16000,
    query: 'a=1',
    inBandToken: false,
    chunkBytes: 640,
    start: () => JSON.stringify({ type: 'hello', codec: 'pcm16', sample_rate: 16000 }),
    media: (s) => ({ data: pcm16ToBytes(s), binary: true }),
  },
];

function adapterFor(script: Script): CarrierMedia {
  const ctx: AdapterContext = {
    query: new URLSearchParams(script.query ?? ''),
    pathCallId: 'call_1',
    newStreamId: () => 'generated',
  };
  return MEDIA_ADAPTERS[script.carrier](ctx);
}

function parseAll(adapter: CarrierMedia, data: Uint8Array, binary: boolean): CarrierEvent[] {
  const events: CarrierEvent[] = [];
  adapter.parse(data, binary, (e) => events.push(e));
  return events;
}

const wireBytes = (data: string | Uint8Array): Buffer => {
  if (typeof data !== 'string') return Buffer.from(data);
  const msg = JSON.parse(data) as { media?: { payload?: string } };
  return Buffer.from(msg.media?.payload ?? '', 'base64');
};

for (const script of SCRIPTS) {
  describe(`${script.carrier} adapter conformance`, () => {
    test('audio before start is refused as media_before_start (the browser starts on it instead)', () => {
      const adapter = adapterFor(script);
      const events = parseAll(
        adapter,
        script.media(new Int16Array(160)).data,
        script.media(new Int16Array(160)).binary,
      );
      if (script.carrier === 'web') assert.equal(events[0]?.type, 'start');
      else assert.deepEqual(events, [{ type: 'bad', reason: 'media_before_start' }]);
    });

    test('start: token out of the parameters, other parameters kept', () => {
      const adapter = adapterFor(script);
      const [event] = parseAll(adapter, Buffer.from(script.start('tok')), false);
      assert.equal(event?.type, 'start');
      if (event?.type !== 'start') return;
      assert.equal(event.token, script.inBandToken ? 'tok' : undefined);
      assert.equal(event.start.customParameters.a, '1');
      assert.equal(event.start.customParameters.token, undefined);
      assert.equal(event.start.format.sampleRate, script.rate);
    });

    test('inbound audio of odd message sizes comes out as exact 320-sample frames, none lost', () => {
      const adapter = adapterFor(script);
      parseAll(adapter, Buffer.from(script.start('tok')), false);
      const second = sine(script.rate, 500, script.rate);
      const frames: Int16Array[] = [];
      let offset = 0;
      for (const size of [script.rate / 50, 7 * 2, script.rate / 10, 1000, script.rate]) {
        const part = second.subarray(offset, Math.min(second.length, offset + size));
        offset += part.length;
        const msg = script.media(part);
        for (const e of parseAll(adapter, msg.data, msg.binary))
          if (e.type === 'audio') frames.push(...e.frames);
        if (offset >= second.length) break;
      }
      for (const f of frames) assert.equal(f.length, 320);
      assert.equal(frames.length, 50, 'one second at any rate is 50 canonical frames');
    });

    test('outbound: fixed chunks with their duration, a mark after all its audio, clear drops what is held', () => {
      const adapter = adapterFor(script);
      parseAll(adapter, Buffer.from(script.start('tok')), false);
      const out = adapter.encodeAudio(sine(16000, 440, 16000 + 123));
      for (const m of out) {
        assert.equal(wireBytes(m.data).length, script.chunkBytes);
        assert.ok(m.audioMs > 0);
      }
      const mark = adapter.encodeMark('m1');
      const last = mark.at(-1)!;
      assert.equal(last.audioMs, 0, 'the marker is a control message');
      assert.match(String(last.data), /m1/);
      const total = [...out, ...mark].reduce((ms, m) => ms + m.audioMs, 0);
      assert.ok(total >= 1007, `all audio before the mark went out (${total} ms)`);
      adapter.encodeAudio(new Int16Array(100));
      const clear = adapter.encodeClear();
      assert.equal(clear.length, 1);
      assert.equal(clear[0]!.audioMs, 0);
      assert.deepEqual(
        adapter.encodeMark('m2').map((m) => m.audioMs),
        [0],
        'after a clear nothing is held back',
      );
    });

    test('never throws, whatever arrives (before or after start)', () => {
      const adapter = adapterFor(script);
      fc.assert(
        fc.property(
          fc.boolean(),
          fc.oneof(
            fc.uint8Array({ maxLength: 2000 }),
            fc.json().map((s) => Buffer.from(s)),
            fc.string().map((s) => Buffer.from(s)),
          ),
          fc.boolean(),
          (startFirst, data, binary) => {
            if (startFirst) parseAll(adapter, Buffer.from(script.start('tok')), false);
            const events = parseAll(adapter, data, binary);
            for (const e of events)
              if (e.type === 'audio') for (const f of e.frames) assert.equal(f.length, 320);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
}
