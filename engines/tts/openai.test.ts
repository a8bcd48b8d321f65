/**
 * OpenAI-compatible speech against the fake server: the request it sends, 24 -> 16 kHz resampling that does not
 * depend on how the body is cut into reads (odd byte counts included), streaming before the body ends, long text
 * split into sequential requests at sentence boundaries, and which failures are retryable (429/5xx/timeouts/cuts
 * before the first chunk only).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Resampler } from '../../codecs/index.ts';
import { type EngineError, isEngineError } from '../errors.ts';
import { MAX_INPUT_CHARS, OpenAiSynthesizer, type OpenAiSynthesizerOptions } from './providers/openai.ts';
import { collect, waitUntil } from './testing/conformance.ts';
import { FakeOpenAiSpeechServer, fakeSpeechPcm } from './testing/fake-openai-speech-server.ts';

const TEXT = 'Your order will arrive tomorrow morning.';
let server: FakeOpenAiSpeechServer;

function synthesizer(options: Partial<OpenAiSynthesizerOptions> = {}): OpenAiSynthesizer {
  return new OpenAiSynthesizer({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'tts-1', ...options });
}

function speak(text = TEXT, options: Partial<OpenAiSynthesizerOptions> = {}, speed?: number) {
  return synthesizer(options).synthesize({
    text,
    voice: 'alloy',
    language: 'en-IN',
    ...(speed ? { speed } : {}),
  });
}

async function engineFailure(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isEngineError(error), `not an EngineError: ${String(error)}`);
    return error;
  }
  assert.fail('expected an EngineError');
}

/** Expected output: the fake's 24 kHz tone through one resampler, flushed. */
function expected(chars: number): Int16Array {
  const pcm = fakeSpeechPcm(chars, server.behaviour);
  const input = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
  const resampler = new Resampler(24_000, 16_000);
  const head = resampler.process(input);
  const tail = resampler.flush();
  const all = new Int16Array(head.length + tail.length);
  all.set(head);
  all.set(tail, head.length);
  return all;
}

before(async () => {
  server = await FakeOpenAiSpeechServer.start();
});
after(() => server.close());
beforeEach(() => server.reset());

describe('OpenAiSynthesizer requests', () => {
  test('posts model, voice, input, pcm format and speed with the bearer key', async () => {
    await collect(speak(TEXT, {}, 1.5));
    const [request] = server.requests;
    assert.equal(request?.path, '/v1/audio/speech');
    assert.equal(request?.authorization, 'Bearer sk-test');
    assert.deepEqual(request?.body, {
      model: 'tts-1',
      voice: 'alloy',
      input: TEXT,
      response_format: 'pcm',
      speed: 1.5,
    });
  });

  test('a speed outside 0.25-4 is refused without a request', async () => {
    for (const speed of [0.1, 5]) {
      const error = await engineFailure(collect(speak(TEXT, {}, speed)));
      assert.equal(error.retryable, false);
    }
    assert.equal(server.requests.length, 0);
  });

  test('text over 4096 characters goes out as sequential requests cut at sentence ends', async () => {
    const sentence = 'This is one sentence of a long reply that the caller asked for.';
    const text = Array.from({ length: 100 }, () => sentence).join(' ');
    const audio = await collect(speak(text));
    assert.ok(server.requests.length >= 2);
    const inputs = server.requests.map((r) => r.body['input'] as string);
    assert.ok(inputs.every((input) => input.length <= MAX_INPUT_CHARS && input.endsWith('for.')));
    assert.equal(inputs.join(' '), text);
    const chars = inputs.reduce((sum, input) => sum + input.length, 0);
    // One resampler across the requests: the length is that of one continuous stream.
    assert.equal(audio.samples.length, expected(chars).length);
  });
});

describe('OpenAiSynthesizer audio', () => {
  test('resamples the 24 kHz stream to exactly what one resampler makes of it, in 100 ms chunks', async () => {
    const audio = await collect(speak());
    assert.deepEqual(audio.samples, expected(TEXT.length));
    assert.ok(audio.chunks.slice(0, -1).every((chunk) => chunk.length === 1600));
  });

  for (const chunkBytes of [1, 3, 4801, 9999]) {
    test(`reads of ${chunkBytes} bytes (splitting samples) give the same audio`, async () => {
      server.configure({ chunkBytes });
      assert.deepEqual((await collect(speak())).samples, expected(TEXT.length));
    });
  }

  test('yields audio while the server is still sending the body', async () => {
    server.configure({ bytesPerSecond: 48_000, chunkBytes: 4800 }); // real time: 2.4 s for this text
    for await (const _chunk of speak()) {
      assert.equal(server.requests[0]?.state, 'open');
      break;
    }
  });

  test('aborting closes the connection before the body is sent', async () => {
    server.configure({ bytesPerSecond: 48_000 });
    const controller = new AbortController();
    const stream = synthesizer().synthesize({
      text: TEXT,
      voice: 'alloy',
      language: 'en',
      signal: controller.signal,
    });
    for await (const _chunk of stream) controller.abort();
    await waitUntil(() => server.requests[0]?.state !== 'open', 'the server sees the request end');
    assert.equal(server.requests[0]?.state, 'closed');
  });
});

describe('OpenAiSynthesizer failures', () => {
  for (const [status, retryable] of [
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
  ] as const) {
    test(`status ${status} before any audio is ${retryable ? '' : 'not '}retryable`, async () => {
      server.configure({ failStatus: status, failCount: 1 });
      const error = await engineFailure(collect(speak()));
      assert.equal(error.retryable, retryable);
      assert.equal(error.options.status, status);
      assert.equal(server.requests.length, 1, 'no hidden retries');
    });
  }

  test('the SDK retries when asked to', async () => {
    server.configure({ failStatus: 503, failCount: 1 });
    const audio = await collect(speak(TEXT, { maxRetries: 1 }));
    assert.ok(audio.samples.length > 0);
    assert.equal(server.requests.length, 2);
  });

  test('a stream cut before the first chunk is retryable, after it is not', async () => {
    server.configure({ cutAfterBytes: 1000, cutCount: 1 });
    assert.equal((await engineFailure(collect(speak()))).retryable, true);
    server.configure({ cutAfterBytes: 20_000, cutCount: 1 });
    assert.equal((await engineFailure(collect(speak()))).retryable, false);
  });

  test('a failure of a later request of a long text is not retryable', async () => {
    const text = Array.from({ length: 100 }, () => 'Another sentence of a long reply goes here.').join(' ');
    let chunks = 0;
    const failure = engineFailure(
      (async () => {
        for await (const _chunk of speak(text))
          if (++chunks === 1) server.configure({ failCount: 1, failStatus: 503 });
      })(),
    );
    assert.equal((await failure).retryable, false);
    assert.ok(chunks > 0);
  });

  test('a server slower than the first-byte timeout is a retryable timeout', async () => {
    server.configure({ firstByteDelayMs: 2000 });
    const error = await engineFailure(collect(speak(TEXT, { firstByteTimeoutMs: 50 })));
    assert.equal(error.retryable, true);
  });

  test('a stalled body is a retryable failure before the first chunk', async () => {
    server.configure({ chunkBytes: 1000, bytesPerSecond: 100 }); // 10 s between reads
    const error = await engineFailure(collect(speak(TEXT, { idleReadTimeoutMs: 50 })));
    assert.equal(error.retryable, true);
    assert.match(error.message, /stalled/);
  });

  test('a refused connection is retryable', async () => {
    const closed = await FakeOpenAiSpeechServer.start();
    const baseURL = closed.baseURL;
    await closed.close();
    const tts = new OpenAiSynthesizer({ baseURL, apiKey: 'sk-test' });
    const error = await engineFailure(
      collect(tts.synthesize({ text: TEXT, voice: 'alloy', language: 'en' })),
    );
    assert.equal(error.retryable, true);
  });
});
