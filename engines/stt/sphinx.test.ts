/**
 * Local PocketSphinx, for real, on speech made by eSpeak NG. Skipped with a message when the Debian packages are
 * missing, except in CI, where they are required. Recognition of a synthetic voice by a general model is rough,
 * so the words are checked loosely (overlap), never exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { hypothesis, SphinxTranscriber } from './providers/sphinx.ts';
import { requireSphinx, sphinxSkip } from './testing/local-engines.ts';
import { concat, espeak, silence, wordOverlap } from './testing/speech.ts';

const options = { skip: sphinxSkip, timeout: 60_000 };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

describe('sphinx: without the decoder', () => {
  test('available() is false when the command or the model is missing', () => {
    assert.equal(
      SphinxTranscriber.available({ decoder: 'spawn', command: 'no-such-pocketsphinx-command' }),
      false,
    );
    assert.equal(SphinxTranscriber.available({ modelDir: '/nonexistent/model' }), false);
  });

  test('the hypothesis is the decoder stdout lines, joined', () => {
    assert.equal(hypothesis('hello world\n\nhow are you\n'), 'hello world how are you');
    assert.equal(hypothesis('INFO: cmd_ln.c(702): Parsing\nyes\n'), 'yes');
    assert.equal(hypothesis(''), '');
  });

  test('a language other than English is refused, not retryable', async () => {
    const error = await rejection(new SphinxTranscriber().transcribe(silence(100), { language: 'hi-IN' }));
    assert.ok(isEngineError(error) && !error.retryable);
  });
});

describe('sphinx: PocketSphinx on eSpeak NG speech', () => {
  test('is installed', options, () => {
    requireSphinx();
    assert.equal(SphinxTranscriber.available(), true);
  });

  test('transcribes English speech, loosely: "hello world" and a weather question', options, async () => {
    requireSphinx();
    const stt = new SphinxTranscriber();
    const hello = await stt.transcribe(concat(silence(200), espeak('hello world', { wordsPerMinute: 130 })), {
      language: 'en-IN',
    });
    assert.ok(wordOverlap(hello.text, 'hello world') >= 0.5, `heard "${hello.text}"`);
    assert.equal(hello.language, 'en-IN');
    const weather = await stt.transcribe(espeak('what is the weather today', { wordsPerMinute: 170 }), {
      language: 'en-GB',
    });
    assert.ok(wordOverlap(weather.text, 'what is the weather today') >= 0.4, `heard "${weather.text}"`);
  });

  test('silence is heard as nothing, and no audio needs no decoder', options, async () => {
    requireSphinx();
    const stt = new SphinxTranscriber();
    assert.equal((await stt.transcribe(silence(1_000), { language: 'en-US' })).text, '');
    assert.equal((await stt.transcribe(new Int16Array(0), { language: 'en-US' })).text, '');
  });

  test('aborting stops the decoder and rejects, not retryable', options, async () => {
    requireSphinx();
    const controller = new AbortController();
    const pending = new SphinxTranscriber().transcribe(espeak('one two three four five six seven eight'), {
      language: 'en-US',
      signal: controller.signal,
    });
    setImmediate(() => controller.abort());
    const error = await rejection(pending);
    assert.ok(isEngineError(error) && !error.retryable, String(error));
  });

  test('a decoder that fails is a non-retryable EngineError naming its exit status', options, async () => {
    requireSphinx();
    const error = await rejection(
      new SphinxTranscriber({ decoder: 'spawn', command: 'false' }).transcribe(silence(100), {
        language: 'en',
      }),
    );
    assert.ok(isEngineError(error) && !error.retryable);
    assert.match(error.message, /exited with 1/);
  });
});
