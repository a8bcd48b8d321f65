/**
 * The media-message scanner against JSON.parse: whatever it accepts, JSON.parse reads as a media message with
 * the same fields; what it declines (escapes, other bytes, literals, nesting, repeats, truncation, other events)
 * goes to JSON.parse. And the JSON carriers' adapters give the same events for a message either way.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { mulawEncode, pcm16ToBytes } from '../../codecs/index.ts';
import { sine } from '../testing/audio.ts';
import { MEDIA_ADAPTERS } from './index.ts';
import { MediaMessageScanner, type ScannedMedia } from './media-message-scan.ts';
import type { CarrierEvent, CarrierName } from './types.ts';
import { asNumber } from './wire.ts';

const scanner = new MediaMessageScanner();
const PAYLOAD = Buffer.from(mulawEncode(sine(8000, 440, 160))).toString('base64');

function scan(text: string | Uint8Array): ScannedMedia | undefined {
  return scanner.scan(typeof text === 'string' ? Buffer.from(text) : text)
    ? { ...scanner.fields }
    : undefined;
}

/** The media fields as the adapters read them from JSON.parse's object; undefined when it is no media message. */
function parsed(text: string): ScannedMedia | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const msg = value as { event?: unknown; media?: Record<string, unknown> } | null;
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || msg.event !== 'media')
    return undefined;
  const media = msg.media ?? {};
  const read = (key: string) =>
    media[key] === null ? undefined : (media[key] as string | number | undefined);
  return {
    track: read('track'),
    timestamp: read('timestamp'),
    chunk: read('chunk'),
    payload: read('payload'),
  };
}

/** Equal as the adapters use them: track and payload as they are, timestamp and chunk by their number. */
function assertSameFields(actual: ScannedMedia, expected: ScannedMedia, text: string): void {
  assert.equal(actual.track, expected.track, text);
  assert.equal(actual.payload, expected.payload, text);
  assert.equal(asNumber(actual.timestamp), asNumber(expected.timestamp), text);
  assert.equal(asNumber(actual.chunk), asNumber(expected.chunk), text);
}

describe('media message scanner', () => {
  test("reads Twilio's media message", () => {
    const text = JSON.stringify({
      event: 'media',
      sequenceNumber: '3',
      media: { track: 'inbound', chunk: '2', timestamp: '40', payload: PAYLOAD },
      streamSid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
    });
    assert.deepEqual(scan(text), { track: 'inbound', chunk: 2, timestamp: 40, payload: PAYLOAD });
  });

  test("reads Plivo's numbers and Exotel's snake_case neighbours, keys in any order", () => {
    assert.deepEqual(
      scan(
        `{"sequenceNumber":7,"streamId":"p1","media":{"payload":"${PAYLOAD}","chunk":5,"timestamp":"1700000000123","track":"inbound"},"event":"media","extra_headers":"a=1"}`,
      ),
      { track: 'inbound', chunk: 5, timestamp: 1700000000123, payload: PAYLOAD },
    );
    assert.deepEqual(scan(`{"media":{"payload":"AAAA"},"stream_sid":"s1","event":"media"}`), {
      track: undefined,
      chunk: undefined,
      timestamp: undefined,
      payload: 'AAAA',
    });
  });

  test('takes JSON whitespace between tokens, and nothing else', () => {
    const text = ` \t{\r\n "event" : "media" ,\n"media":{ "track":"outbound" , "payload" : "QUJD" } }\n `;
    assert.deepEqual(scan(text), {
      track: 'outbound',
      chunk: undefined,
      timestamp: undefined,
      payload: 'QUJD',
    });
    assert.equal(scan(`\f{"event":"media","media":{"payload":"QUJD"}}`), undefined);
    assert.equal(scan(`{"event":"media","media":{"payload":"QUJD"}}\u00a0`), undefined);
  });

  test('numbers as JSON reads them; long or non-integer ones too', () => {
    const text = `{"event":"media","media":{"payload":"AA","timestamp":-0,"chunk":1.5e3,"track":12345678901234567890}}`;
    assert.deepEqual(scan(text), {
      track: Number('12345678901234567890'),
      timestamp: -0,
      chunk: 1500,
      payload: 'AA',
    });
    assert.ok(Object.is(scan(text)?.timestamp, -0));
    assert.deepEqual(scan(`{"event":"media","media":{"timestamp":"0x10","chunk":" 7 "}}`), {
      track: undefined,
      timestamp: '0x10',
      chunk: ' 7 ',
      payload: undefined,
    });
    for (const bad of ['01', '1.', '.5', '-', '1e', '+1', '1e+', '--1', 'NaN', 'Infinity']) {
      assert.equal(scan(`{"event":"media","media":{"chunk":${bad}}}`), undefined, bad);
    }
  });

  test('declines what it cannot read with certainty', () => {
    const declined = [
      // escapes, in any string
      `{"event":"media","media":{"payload":"QU\\u004aD"}}`,
      `{"event":"media","media":{"payload":"QUJD"},"streamSid":"a\\"b"}`,
      `{"ev\\u0065nt":"media","media":{"payload":"QUJD"}}`,
      // bytes outside printable ASCII in a string
      `{"event":"media","media":{"payload":"QU\tJD"}}`,
      `{"event":"media","media":{"payload":"QUJD"},"name":"é"}`,
      // literals, arrays, nesting other than media's
      `{"event":"media","media":{"payload":"QUJD","track":null}}`,
      `{"event":"media","media":{"payload":"QUJD"},"last":true}`,
      `{"event":"media","media":{"payload":["QUJD"]}}`,
      `{"event":"media","media":{"payload":"QUJD"},"start":{"a":"b"}}`,
      `{"event":"media","media":{"payload":"QUJD","x":{}}}`,
      `{"event":"media","media":"QUJD"}`,
      // repeated fields (JSON.parse keeps the last one)
      `{"event":"media","event":"media","media":{"payload":"QUJD"}}`,
      `{"event":"media","media":{"payload":"QUJD"},"media":{"payload":"AAAA"}}`,
      `{"event":"media","media":{"payload":"QUJD","payload":"AAAA"}}`,
      // other events, or none
      `{"event":"mark","media":{"payload":"QUJD"}}`,
      `{"event":"Media","media":{"payload":"QUJD"}}`,
      `{"event":1,"media":{"payload":"QUJD"}}`,
      `{"media":{"payload":"QUJD"}}`,
      `{"event":"media"}`,
      `{}`,
      // not one object
      `[{"event":"media","media":{"payload":"QUJD"}}]`,
      `{"event":"media","media":{"payload":"QUJD"}}{}`,
      `{"event":"media","media":{"payload":"QUJD"},}`,
      `{"event":"media",,"media":{"payload":"QUJD"}}`,
      `{"event" "media","media":{"payload":"QUJD"}}`,
      `{event:"media","media":{"payload":"QUJD"}}`,
      `{'event':'media','media':{'payload':'QUJD'}}`,
      '',
    ];
    for (const text of declined) assert.equal(scan(text), undefined, text);
    assert.equal(
      scan(Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"event":"media","media":{}}')])),
      undefined,
    );
  });

  test('declines every truncation of a media message', () => {
    const text = `{"event":"media","media":{"track":"inbound","chunk":"2","timestamp":40,"payload":"${PAYLOAD}"}}`;
    assert.ok(scan(text));
    for (let end = 0; end < text.length; end++) assert.equal(scan(text.slice(0, end)), undefined, `${end}`);
  });

  test('reads a message that is a view into a larger buffer', () => {
    const text = `{"event":"media","media":{"payload":"QUJD"}}`;
    const whole = Buffer.from(`xx${text}yy`);
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 2, text.length);
    assert.deepEqual(scan(view), {
      track: undefined,
      chunk: undefined,
      timestamp: undefined,
      payload: 'QUJD',
    });
  });

  test('whatever it accepts, JSON.parse reads as the same media message (fast-check)', () => {
    // Mostly what the scanner reads, with now and then something it must decline.
    const rarely = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: usual, weight: 40 }, { arbitrary: odd, weight: 1 });
    const text = rarely(
      fc.oneof(
        fc.constantFrom('media', 'inbound', 'outbound', 'inbound_track', '40', ' 7', ''),
        fc.base64String(),
      ),
      fc.oneof(fc.constantFrom('a\\"b', 'é', '\\u0041', '\t', 'x\\'), fc.string({ maxLength: 6 })),
    );
    const jsonString = text.map((s) => `"${s}"`);
    const jsonNumber = rarely(
      fc.oneof(fc.nat().map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)),
      fc.constantFrom('-0', '1e400', '007', '1.', '-', '12345678901234567', 'NaN'),
    );
    const scalar = rarely(
      fc.oneof(jsonString, jsonString, jsonNumber),
      fc.constantFrom('null', 'true', '[]', '{}'),
    );
    const space = rarely(fc.constantFrom('', '', ' ', '\n', '\t', '\r\n'), fc.constantFrom('\f', '\u00a0'));
    const members = (keys: fc.Arbitrary<string>, value: fc.Arbitrary<string>) =>
      fc
        .array(fc.tuple(keys, value, space, space), { maxLength: 5 })
        .map((list) => list.map(([k, v, a, b]) => `${a}"${k}"${b}:${a}${v}${b}`));
    const media = members(
      rarely(
        fc.constantFrom('track', 'timestamp', 'chunk', 'payload', 'x'),
        fc.constantFrom('event', 'media'),
      ),
      scalar,
    ).map((list) => `{${list.join(',')}}`);
    const top = fc
      .tuple(
        members(
          rarely(fc.constantFrom('streamSid', 'sequenceNumber'), fc.constantFrom('event', 'media')),
          rarely(scalar, media),
        ),
        rarely(fc.constant('"media"'), scalar),
        rarely(fc.constant(true), fc.constant(false)),
        media,
        space,
        fc.nat(),
      )
      .map(([others, event, withMedia, mediaObject, s, at]) => {
        const list = [`"event":${event}`, ...(withMedia ? [`"media":${mediaObject}`] : []), ...others];
        // Keys in any order: rotate the members.
        const k = at % list.length;
        return `${s}{${[...list.slice(k), ...list.slice(0, k)].join(',')}}${s}`;
      });
    fc.assert(
      fc.property(top, (text) => {
        const fields = scan(text);
        if (fields === undefined) return;
        const expected = parsed(text);
        assert.ok(expected, `accepted what JSON.parse does not read as media: ${text}`);
        assertSameFields(fields, expected, text);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('JSON carriers read a media message the same with or without the scanner', () => {
  const starts: Record<'twilio' | 'exotel' | 'plivo', string> = {
    twilio: JSON.stringify({
      event: 'start',
      streamSid: 'MZ1',
      start: { streamSid: 'MZ1', customParameters: {} },
    }),
    exotel: JSON.stringify({
      event: 'start',
      stream_sid: 's1',
      start: { media_format: { encoding: 'ulaw' } },
    }),
    plivo: JSON.stringify({
      event: 'start',
      start: { streamId: 'p1', mediaFormat: { encoding: 'audio/x-l16', sampleRate: 8000 } },
    }),
  };
  const mulaw = Buffer.from(mulawEncode(sine(8000, 300, 240))).toString('base64');
  const pcm = Buffer.from(pcm16ToBytes(sine(8000, 300, 120))).toString('base64');

  function events(carrier: CarrierName, messages: string[]): CarrierEvent[] {
    const adapter = MEDIA_ADAPTERS[carrier]({
      query: new URLSearchParams(),
      pathCallId: undefined,
      newStreamId: () => 's',
    });
    const out: CarrierEvent[] = [];
    for (const message of messages) adapter.parse(Buffer.from(message), false, (e) => out.push(e));
    return out;
  }

  for (const carrier of ['twilio', 'exotel', 'plivo'] as const) {
    test(carrier, () => {
      const payload = carrier === 'plivo' ? pcm : mulaw;
      const media = [
        `{"event":"media","media":{"track":"inbound","chunk":"1","timestamp":"0","payload":"${payload}"}}`,
        `{"event":"media","media":{"track":"inbound","chunk":"2","timestamp":"20","payload":"${payload}"}}`,
        `{"event":"media","media":{"track":"outbound","chunk":3,"timestamp":40,"payload":"${payload}"}}`,
        `{"event":"media","media":{"track":7,"payload":"${payload}"}}`,
        `{"event":"media","media":{"timestamp":"1e400","chunk":"x","payload":"${payload.slice(0, 9)}"}}`,
        `{"event":"media","media":{"payload":12}}`,
        `{"event":"media","media":{}}`,
      ];
      // An escaped character in a field nobody reads sends the same message through JSON.parse.
      const viaJsonParse = media.map((m) => m.replace('{"event"', '{"note":"\\u0041","event"'));
      assert.ok(media.every((m) => scanner.scan(Buffer.from(m))));
      assert.ok(viaJsonParse.every((m) => !scanner.scan(Buffer.from(m))));
      const before = events(carrier, media);
      assert.deepEqual(before, events(carrier, viaJsonParse));
      assert.deepEqual(
        events(carrier, [starts[carrier], ...media]),
        events(carrier, [starts[carrier], ...viaJsonParse]),
      );
      assert.ok(events(carrier, [starts[carrier], ...media]).some((e) => e.type === 'audio'));
    });
  }
});
