/**
 * The Deepgram protocol without a socket: the connection URL for any base (hosted, self-hosted behind a path
 * prefix, http given for ws), the language codes Deepgram takes, and the parsing of its messages into our events
 * (missing fields, malformed frames).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  deepgramLanguage,
  listenUrl,
  parseServerMessage,
  TurnAssembler,
} from './providers/deepgram-protocol.ts';
import { resultsMessage } from './testing/fake-deepgram-messages.ts';

const params = {
  model: 'nova-3',
  language: 'hi-IN',
  endpointingMs: 300,
  utteranceEndMs: 1000,
  smartFormat: true,
};

describe('deepgram protocol', () => {
  test('the listen URL keeps a path prefix and turns http(s) into ws(s)', () => {
    const url = new URL(listenUrl('https://stt.example.com/deepgram/', params));
    assert.equal(url.protocol, 'wss:');
    assert.equal(url.pathname, '/deepgram/v1/listen');
    assert.equal(url.searchParams.get('language'), 'hi');
    assert.equal(url.searchParams.get('encoding'), 'linear16');
    assert.equal(new URL(listenUrl('wss://api.deepgram.com', params)).pathname, '/v1/listen');
    assert.equal(
      new URL(listenUrl('ws://127.0.0.1:9', { ...params, language: '' })).searchParams.has('language'),
      false,
    );
  });

  test('languages: regional English and Chinese kept whole, others reduced to their code', () => {
    assert.equal(deepgramLanguage('en-IN'), 'en-IN');
    assert.equal(deepgramLanguage('en_GB'), 'en-GB');
    assert.equal(deepgramLanguage('zh-TW'), 'zh-TW');
    assert.equal(deepgramLanguage('hi-IN'), 'hi');
    assert.equal(deepgramLanguage('ta'), 'ta');
    assert.equal(deepgramLanguage('multi'), 'multi');
  });

  test('messages with missing fields parse to safe defaults; unknown types are ignored', () => {
    const turn = new TurnAssembler();
    assert.deepEqual(turn.accept(parseServerMessage('{"type":"Results","is_final":true}')), []);
    assert.deepEqual(turn.accept(parseServerMessage('{"type":"Metadata","request_id":"x"}')), []);
    assert.deepEqual(turn.accept(parseServerMessage('{"type":"SpeechStarted","timestamp":1.2345}')), [
      { type: 'speech_started', atMs: 1235 },
    ]);
    assert.throws(() => parseServerMessage('not json'), SyntaxError);
  });

  test("a turn's final carries every word and the lowest segment confidence", () => {
    const turn = new TurnAssembler();
    const segment = (transcript: string, confidence: number, speechFinal: boolean, start: number) =>
      parseServerMessage(
        JSON.stringify(
          resultsMessage({ transcript, confidence, isFinal: true, speechFinal, start, duration: 0.5 }),
        ),
      );
    assert.deepEqual(turn.accept(segment('good', 0.9, false, 0)), []);
    const [final] = turn.accept(segment('morning', 0.7, true, 0.5));
    assert.ok(final?.type === 'final');
    assert.equal(final.text, 'good morning');
    assert.equal(final.confidence, 0.7);
    assert.deepEqual(
      final.words?.map((w) => [w.word, w.startMs, w.endMs]),
      [
        ['good', 0, 500],
        ['morning', 500, 1000],
      ],
    );
    assert.deepEqual(turn.finish(true), []);
  });
});
