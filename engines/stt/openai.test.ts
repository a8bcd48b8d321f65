/**
 * The OpenAI-compatible transcriber against the fake server: what goes up (a 16 kHz mono 16-bit WAV in a
 * multipart form, the model, ISO-639-1 language, the key), and the retry rules (one retry at most, only for
 * 408/429/5xx, timeouts and connection failures; aborts are never retried).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { isEnglish, iso639_1 } from './language.ts';
import { OpenAiTranscriber } from './providers/openai.ts';
import { FakeOpenAiTranscriptionServer } from './testing/fake-openai-transcription-server.ts';
import { syntheticSpeech } from './testing/speech.ts';

let server: FakeOpenAiTranscriptionServer;
before(async () => {
  server = await FakeOpenAiTranscriptionServer.start({ text: 'namaste' });
});
after(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.latencyMs = 0;
  server.text = 'namaste';
});

function transcriber(
  extra: Partial<ConstructorParameters<typeof OpenAiTranscriber>[0]> = {},
): OpenAiTranscriber {
  return new OpenAiTranscriber({ baseURL: server.baseURL, apiKey: 'sk-test', retryDelayMs: 1, ...extra });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

describe('language codes', () => {
  test('BCP-47 tags become ISO-639-1; tags without a two-letter language give none', () => {
    assert.equal(iso639_1('hi-IN'), 'hi');
    assert.equal(iso639_1('en'), 'en');
    assert.equal(iso639_1('EN_gb'), 'en');
    assert.equal(iso639_1('zh-Hans-CN'), 'zh');
    assert.equal(iso639_1('fil-PH'), undefined);
    assert.equal(iso639_1('und'), undefined);
    assert.equal(iso639_1(''), undefined);
    assert.ok(isEnglish('en-IN') && !isEnglish('hi-IN'));
  });
});

describe('openai transcriber: the upload', () => {
  test('one utterance goes up as a 16 kHz mono 16-bit WAV with model, language and key', async () => {
    const audio = syntheticSpeech(500);
    const result = await transcriber({ model: 'whisper-large-v3', prompt: 'Acme' }).transcribe(audio, {
      language: 'ta-IN',
    });
    assert.equal(result.text, 'namaste');
    assert.equal(server.requests.length, 1);
    const request = server.requests[0]!;
    assert.equal(request.problem, undefined);
    assert.deepEqual(request.wav, { format: 1, channels: 1, sampleRate: 16_000, bitsPerSample: 16 });
    assert.deepEqual(request.audio, audio);
    assert.equal(request.fileName, 'utterance.wav');
    assert.equal(request.fileType, 'audio/wav');
    assert.equal(request.model, 'whisper-large-v3');
    assert.equal(request.language, 'ta');
    assert.equal(request.prompt, 'Acme');
    assert.equal(request.responseFormat, 'json');
    assert.equal(request.authorization, 'Bearer sk-test');
  });

  test('a language with no two-letter code is left to the server to detect', async () => {
    await transcriber().transcribe(syntheticSpeech(200), { language: 'fil-PH' });
    assert.equal(server.requests[0]!.language, undefined);
  });

  test('no audio, no request', async () => {
    assert.deepEqual(await transcriber().transcribe(new Int16Array(0), { language: 'en' }), { text: '' });
    assert.equal(server.requests.length, 0);
  });

  test('a keyless local server still gets a request (the SDK needs some key)', async () => {
    await new OpenAiTranscriber({ baseURL: server.baseURL }).transcribe(syntheticSpeech(200), {
      language: 'en',
    });
    assert.equal(server.requests.length, 1);
  });

  test('stream() without a VAD is refused, as a non-retryable EngineError', () => {
    assert.throws(
      () => transcriber().stream({ language: 'en' }),
      (e: unknown) => isEngineError(e) && !e.retryable,
    );
  });
});

describe('openai transcriber: retries', () => {
  for (const status of [429, 500, 503]) {
    test(`${status} is retried once, and the retry's answer is used`, async () => {
      server.reply({ status });
      const result = await transcriber().transcribe(syntheticSpeech(200), { language: 'en' });
      assert.equal(result.text, 'namaste');
      assert.equal(server.requests.length, 2);
    });
  }

  test('two retryable failures in a row: the second is thrown, no third attempt', async () => {
    server.reply({ status: 503 }, { status: 502 });
    const error = await rejection(transcriber().transcribe(syntheticSpeech(200), { language: 'en' }));
    assert.ok(isEngineError(error));
    assert.equal(error.retryable, true);
    assert.equal(error.options.status, 502);
    assert.equal(server.requests.length, 2);
  });

  for (const status of [400, 401, 404, 413]) {
    test(`${status} is not retried and is not retryable`, async () => {
      server.reply({ status, message: 'no' });
      const error = await rejection(transcriber().transcribe(syntheticSpeech(200), { language: 'en' }));
      assert.ok(isEngineError(error));
      assert.equal(error.retryable, false);
      assert.equal(error.options.status, status);
      assert.equal(server.requests.length, 1);
    });
  }

  test('a timeout is retried once', async () => {
    server.reply({ stall: true });
    const result = await transcriber({ timeoutMs: 1_000 }).transcribe(syntheticSpeech(200), {
      language: 'en',
    });
    assert.equal(result.text, 'namaste');
    assert.equal(server.requests.length, 2);
    await server.idle();
  });

  test('a dropped connection is retried once', async () => {
    server.reply({ hangUp: true });
    const result = await transcriber().transcribe(syntheticSpeech(200), { language: 'en' });
    assert.equal(result.text, 'namaste');
    assert.equal(server.requests.length, 2);
  });

  test('aborting cancels the request in flight, is not retried, and frees the server', async () => {
    server.reply({ stall: true });
    const controller = new AbortController();
    const pending = transcriber().transcribe(syntheticSpeech(200), {
      language: 'en',
      signal: controller.signal,
    });
    while (server.inFlight === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await rejection(pending);
    assert.ok(isEngineError(error));
    assert.equal(error.retryable, false);
    await server.idle();
    assert.equal(server.requests.length, 1);
  });
});
