/**
 * The Deepgram live transcriber against the fake server: the connection (URL, query, key), the turn logic
 * (partials carry the turn so far, is_final segments accumulate into one final on speech_final, UtteranceEnd
 * as the fallback, Finalize results end the turn), the control messages (KeepAlive only when idle, Finalize on
 * flush, CloseStream on end), and failures (refused handshakes, a dropped connection: an error, no reconnect).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { DeepgramTranscriber, type DeepgramTranscriberOptions } from './providers/deepgram.ts';
import { Recorder } from './testing/conformance.ts';
import {
  resultsMessage,
  speechStartedMessage,
  utteranceEndMessage,
} from './testing/fake-deepgram-messages.ts';
import { type FakeDeepgramOptions, FakeDeepgramServer } from './testing/fake-deepgram-server.ts';
import { concat, pushAll, silence, syntheticSpeech } from './testing/speech.ts';

let server: FakeDeepgramServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function open(options: FakeDeepgramOptions, client: DeepgramTranscriberOptions = {}) {
  server = await FakeDeepgramServer.start(options);
  const stt = new DeepgramTranscriber({ baseUrl: server.baseUrl, apiKey: 'dg-key', ...client });
  const stream = stt.stream({ language: 'en-IN' });
  return { fake: server, stt, stream, recorder: new Recorder(stream) };
}

const final = (transcript: string, speechFinal: boolean, start = 0) =>
  resultsMessage({ transcript, isFinal: true, speechFinal, start, duration: 1 });

describe('deepgram: the connection', () => {
  test('URL, query and key as the live API wants them', async () => {
    const { fake, stream, recorder } = await open(
      {},
      { model: 'nova-2', endpointingMs: 450, utteranceEndMs: 1200 },
    );
    await stream.end();
    await recorder.done;
    const connection = fake.connections[0]!;
    assert.equal(connection.authorization, 'Token dg-key');
    assert.deepEqual(Object.fromEntries(connection.query), {
      model: 'nova-2',
      encoding: 'linear16',
      sample_rate: '16000',
      channels: '1',
      interim_results: 'true',
      endpointing: '450',
      utterance_end_ms: '1200',
      vad_events: 'true',
      smart_format: 'true',
      language: 'en-IN',
    });
  });

  test('audio pushed before the socket opens is sent, in order, once it does', async () => {
    const { fake, stream, recorder } = await open({});
    pushAll(stream, silence(1_000));
    stream.flush();
    await stream.end();
    await recorder.done;
    const connection = fake.connections[0]!;
    assert.equal(connection.audioMs, 1_000);
    assert.deepEqual(connection.controls, ['Finalize', 'CloseStream']);
  });
});

describe('deepgram: turns', () => {
  test('partials carry the turn so far; is_final segments accumulate into one final on speech_final', async () => {
    const { stream, recorder } = await open({
      script: [
        {
          afterAudioMs: 20,
          messages: [speechStartedMessage(0.02), resultsMessage({ transcript: 'I would' })],
        },
        { afterAudioMs: 40, messages: [final('I would like', false)] },
        { afterAudioMs: 60, messages: [resultsMessage({ transcript: 'to book' })] },
        { afterAudioMs: 80, messages: [final('to book a table.', true, 1)] },
      ],
    });
    pushAll(stream, silence(100));
    await recorder.waitFor((e) => e.type === 'final');
    await stream.end();
    await recorder.done;
    assert.deepEqual(
      recorder.events.map((e) =>
        e.type === 'final'
          ? [e.type, e.text, e.endOfTurn]
          : e.type === 'partial'
            ? [e.type, e.text]
            : [e.type],
      ),
      [
        ['speech_started'],
        ['partial', 'I would'],
        ['partial', 'I would like to book'],
        ['final', 'I would like to book a table.', true],
      ],
    );
    const turn = recorder.finals()[0]!;
    assert.deepEqual(
      turn.words?.map((w) => w.word),
      ['I', 'would', 'like', 'to', 'book', 'a', 'table.'],
    );
    assert.equal(turn.words?.[3]?.startMs, 1_000);
  });

  test('UtteranceEnd ends a turn that never got speech_final', async () => {
    const { stream, recorder } = await open({
      script: [
        { afterAudioMs: 20, messages: [final('hello', false), final('there', false)] },
        { afterAudioMs: 40, messages: [utteranceEndMessage(1.5)] },
      ],
    });
    pushAll(stream, silence(60));
    await recorder.waitFor((e) => e.type === 'utterance_end');
    await stream.end();
    await recorder.done;
    assert.deepEqual(recorder.events, [
      {
        type: 'final',
        text: 'hello there',
        words: recorder.finals()[0]!.words,
        endOfTurn: true,
        confidence: 0.98,
      },
      { type: 'utterance_end', atMs: 1_500 },
    ]);
  });

  test('UtteranceEnd after speech_final adds no second final', async () => {
    const { stream, recorder } = await open({
      script: [{ afterAudioMs: 20, messages: [final('yes', true), utteranceEndMessage(0.4)] }],
    });
    pushAll(stream, silence(40));
    await recorder.waitFor((e) => e.type === 'utterance_end');
    await stream.end();
    await recorder.done;
    assert.deepEqual(
      recorder.events.map((e) => e.type),
      ['final', 'utterance_end'],
    );
  });

  test('flush() sends Finalize, and its result ends the turn', async () => {
    const { fake, stream, recorder } = await open({
      script: [{ afterAudioMs: 20, messages: [final('my number is', false)] }],
      onFinalize: [[resultsMessage({ transcript: 'nine eight', isFinal: true, fromFinalize: true })]],
    });
    pushAll(stream, silence(40));
    await fake.until(() => fake.connections[0]?.audioMs === 40);
    stream.flush();
    const turn = await recorder.waitFor((e) => e.type === 'final');
    assert.deepEqual(fake.connections[0]!.controls, ['Finalize']);
    assert.ok(turn.type === 'final' && turn.text === 'my number is nine eight' && turn.endOfTurn);
    await stream.end();
    await recorder.done;
  });

  test('end() sends CloseStream and gives what the server finalised before closing', async () => {
    const { fake, stream, recorder } = await open({ transcripts: ['see you tomorrow'] });
    pushAll(stream, concat(silence(200), syntheticSpeech(800)));
    await stream.end();
    await recorder.done;
    assert.deepEqual(fake.connections[0]!.controls, ['CloseStream']);
    assert.deepEqual(
      recorder.finals().map((f) => [f.text, f.endOfTurn]),
      [['see you tomorrow', true]],
    );
    await fake.until(() => fake.activeConnections === 0);
    assert.equal(fake.connections[0]!.closeCode, 1000);
  });

  test('at hang-up (end, then the reader leaves and the call aborts) the stream still closes normally', async () => {
    server = await FakeDeepgramServer.start({ transcripts: ['thank you bye'] });
    const fake = server;
    const call = new AbortController();
    const stream = new DeepgramTranscriber({ baseUrl: fake.baseUrl }).stream({
      language: 'en-IN',
      signal: call.signal,
    });
    const reading = (async () => {
      for await (const event of stream) if (event.type === 'final') break;
    })();
    pushAll(stream, concat(silence(200), syntheticSpeech(800)));
    await fake.until(() => (fake.connections[0]?.audioMs ?? 0) >= 1000);
    void stream.end();
    call.abort();
    await reading;
    await fake.until(() => fake.activeConnections === 0);
    assert.deepEqual(fake.connections[0]!.controls, ['CloseStream']);
    assert.equal(fake.connections[0]!.closeCode, 1000);
  });

  test('aborting an open stream sends CloseStream and closes normally, with no event after the abort', async () => {
    server = await FakeDeepgramServer.start({ transcripts: ['hello there'] });
    const fake = server;
    const call = new AbortController();
    const stream = new DeepgramTranscriber({ baseUrl: fake.baseUrl }).stream({
      language: 'en-IN',
      signal: call.signal,
    });
    const recorder = new Recorder(stream);
    pushAll(stream, concat(silence(200), syntheticSpeech(800)));
    await fake.until(() => (fake.connections[0]?.audioMs ?? 0) >= 1000);
    call.abort();
    await recorder.done;
    await fake.until(() => fake.activeConnections === 0);
    assert.deepEqual(fake.connections[0]!.controls, ['CloseStream']);
    assert.equal(fake.connections[0]!.closeCode, 1000);
    assert.deepEqual(recorder.finals(), []);
  });
});

describe('deepgram: keeping the socket alive', () => {
  test('KeepAlive goes up while no audio is sent, and not while audio flows', async () => {
    const { fake, stream, recorder } = await open({}, { keepAliveIntervalMs: 150 });
    const feeding = setInterval(() => stream.push(silence(20)), 5);
    await fake.until(() => (fake.connections[0]?.audioMs ?? 0) >= 600);
    clearInterval(feeding);
    assert.deepEqual(fake.connections[0]!.controls, []);
    await fake.until(() => fake.connections[0]!.controls.length >= 2);
    assert.deepEqual(fake.connections[0]!.controls.slice(0, 2), ['KeepAlive', 'KeepAlive']);
    await stream.end();
    await recorder.done;
  });
});

describe('deepgram: failures (no reconnect)', () => {
  test('a refused key (401) is a non-retryable error with its status, and the stream ends', async () => {
    const { stream, recorder } = await open({ apiKey: 'another-key' });
    await recorder.done;
    const [error] = recorder.errors();
    assert.ok(isEngineError(error));
    assert.equal(error.retryable, false);
    assert.equal(error.options.status, 401);
    await stream.end();
  });

  test('a busy server (503) is a retryable error', async () => {
    const { recorder } = await open({ refuseWith: 503 });
    await recorder.done;
    const [error] = recorder.errors();
    assert.ok(isEngineError(error) && error.retryable && error.options.status === 503);
  });

  test('a connection dropped mid-call gives the words so far, then an error; nothing reconnects', async () => {
    const { fake, stream, recorder } = await open({
      script: [
        { afterAudioMs: 20, messages: [final('hello', false), resultsMessage({ transcript: 'wor' })] },
      ],
    });
    pushAll(stream, silence(20));
    await recorder.waitFor((e) => e.type === 'partial');
    fake.connections[0]!.drop();
    await recorder.done;
    assert.deepEqual(
      recorder.events.map((e) => (e.type === 'final' ? `final:${e.text}:${e.endOfTurn}` : e.type)),
      ['partial', 'final:hello:false', 'error'],
    );
    const error = recorder.errors()[0];
    assert.ok(isEngineError(error) && error.retryable);
    pushAll(stream, silence(100));
    await stream.end();
    assert.equal(fake.connections.length, 1);
  });
});

describe('deepgram: a server that does not close after CloseStream', () => {
  test('is closed (1000) from our side after closeTimeoutMs, and the caller hears that results may be lost', async () => {
    const { fake, stream, recorder } = await open({}, { closeTimeoutMs: 100 });
    fake.latencyMs = 60_000;
    pushAll(stream, silence(100));
    await stream.end();
    await recorder.done;
    assert.deepEqual(fake.connections[0]!.controls, ['CloseStream']);
    const [error] = recorder.errors();
    assert.ok(isEngineError(error) && error.retryable, String(error));
    await fake.until(() => fake.activeConnections === 0);
    assert.equal(fake.connections[0]!.closeCode, 1000);
  });
});

describe('deepgram: transcribe()', () => {
  test('a whole recording through one live stream', async () => {
    server = await FakeDeepgramServer.start({ transcripts: ['first part', 'second part'] });
    const stt = new DeepgramTranscriber({ baseUrl: server.baseUrl });
    const audio = concat(
      silence(200),
      syntheticSpeech(600),
      silence(800),
      syntheticSpeech(600),
      silence(800),
    );
    const result = await stt.transcribe(audio, { language: 'en' });
    assert.equal(result.text, 'first part second part');
    assert.equal(server.connections[0]!.authorization, undefined);
  });
});
