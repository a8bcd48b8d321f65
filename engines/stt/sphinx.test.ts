/**
 * Local PocketSphinx, for real, on speech made by eSpeak NG. Skipped with a message when the Debian packages are
 * missing, except in CI, where they are required. Recognition of a synthetic voice by a general model is rough,
 * so the words are checked loosely (overlap), never exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isEngineError } from '../errors.ts';
import { EnergyVad } from '../vad/providers/energy.ts';
import { hypothesis, SPHINX_DEFAULTS, SphinxTranscriber } from './providers/sphinx.ts';
import { SphinxDecoderPool, sphinxAddon } from './providers/sphinx-resident.ts';
import { Recorder } from './testing/conformance.ts';
import { requireSphinx, residentSphinxSkip, sphinxSkip } from './testing/local-engines.ts';
import { concat, espeak, frames, pushAll, silence, wordOverlap } from './testing/speech.ts';

const options = { skip: sphinxSkip, timeout: 60_000 };
const residentOptions = { skip: residentSphinxSkip, timeout: 60_000 };

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

for (const decoder of ['resident', 'spawn'] as const) {
  describe(`sphinx: PocketSphinx on eSpeak NG speech, ${decoder} decoder`, () => {
    const options = decoder === 'resident' ? residentOptions : { skip: sphinxSkip, timeout: 60_000 };
    test('is installed', options, () => {
      requireSphinx();
      assert.equal(SphinxTranscriber.available({ decoder }), true);
    });

    test('transcribes English speech, loosely: "hello world" and a weather question', options, async () => {
      requireSphinx();
      // General English: the model's own language model (the resident decoder defaults to the agent-call one).
      const stt = new SphinxTranscriber({ decoder, languageModel: 'general' });
      const hello = await stt.transcribe(
        concat(silence(200), espeak('hello world', { wordsPerMinute: 130 })),
        {
          language: 'en-IN',
        },
      );
      assert.ok(wordOverlap(hello.text, 'hello world') >= 0.5, `heard "${hello.text}"`);
      assert.equal(hello.language, 'en-IN');
      const weather = await stt.transcribe(espeak('what is the weather today', { wordsPerMinute: 170 }), {
        language: 'en-GB',
      });
      assert.ok(wordOverlap(weather.text, 'what is the weather today') >= 0.4, `heard "${weather.text}"`);
    });

    test('silence is heard as nothing, and no audio needs no decoder', options, async () => {
      requireSphinx();
      const stt = new SphinxTranscriber({ decoder });
      assert.equal((await stt.transcribe(silence(1_000), { language: 'en-US' })).text, '');
      assert.equal((await stt.transcribe(new Int16Array(0), { language: 'en-US' })).text, '');
    });

    test('aborting stops the decoder and rejects, not retryable', options, async () => {
      requireSphinx();
      const controller = new AbortController();
      const pending = new SphinxTranscriber({ decoder }).transcribe(
        espeak('one two three four five six seven eight'),
        {
          language: 'en-US',
          signal: controller.signal,
        },
      );
      setImmediate(() => controller.abort());
      const error = await rejection(pending);
      assert.ok(isEngineError(error) && !error.retryable, String(error));
    });
  });
}

describe('sphinx: spawned decoder failures', () => {
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

const MODEL = SPHINX_DEFAULTS.modelDir;
const DECODER_ARGS = [
  '-hmm',
  `${MODEL}/en-us`,
  '-lm',
  `${MODEL}/en-us.lm.bin`,
  '-dict',
  `${MODEL}/cmudict-en-us.dict`,
];

describe('sphinx: resident decoder', () => {
  test(
    'is the default once built, and streams: speech_started, partials while the caller speaks, the final at the pause',
    residentOptions,
    async () => {
      requireSphinx();
      assert.equal(
        SphinxTranscriber.preferredDecoder(),
        'resident',
        'the native decoder was built by npm ci',
      );
      const stt = new SphinxTranscriber({ vad: new EnergyVad() });
      assert.deepEqual(stt.capabilities, { streaming: true, interimResults: true });
      const stream = stt.stream({ language: 'en-US' });
      const recorder = new Recorder(stream);
      const phrase = 'one two three four five six seven eight nine ten';
      const speech = concat(silence(300), espeak(phrase, { wordsPerMinute: 150 }));
      // As a caller speaks: 100 ms of audio every 100 ms.
      const chunks = frames(speech, 1_600);
      for (const chunk of chunks.slice(0, -1)) {
        stream.push(chunk);
        await sleep(100);
      }
      const partialsWhileSpeaking = recorder.events.filter((e) => e.type === 'partial').length;
      pushAll(stream, concat(chunks.at(-1)!, silence(1_500)));
      await stream.end();
      await recorder.done;
      assert.equal(recorder.events[0]?.type, 'speech_started');
      const finals = recorder.finals();
      assert.equal(finals.length, 1, JSON.stringify(recorder.events));
      // The words are final at the first pause; the speech's end, confirmed later, is an utterance_end.
      assert.equal(finals[0]!.endOfTurn, false);
      assert.equal(recorder.events.at(-1)?.type, 'utterance_end', JSON.stringify(recorder.events));
      assert.ok(wordOverlap(finals[0]!.text, phrase) >= 0.4, `heard "${finals[0]!.text}"`);
      assert.ok(partialsWhileSpeaking >= 1, `no partial while speaking: ${JSON.stringify(recorder.events)}`);
    },
  );

  test('by default it hears everyday agent-call phrases', residentOptions, async () => {
    requireSphinx();
    const stt = new SphinxTranscriber();
    for (const phrase of ['i want to book an appointment', 'my number is four five six seven']) {
      const { text } = await stt.transcribe(espeak(phrase, { wordsPerMinute: 150 }), { language: 'en-IN' });
      assert.ok(wordOverlap(text, phrase) >= 0.5, `heard "${text}" for "${phrase}"`);
    }
  });

  test('decoding runs off the event loop', residentOptions, async () => {
    requireSphinx();
    const stt = new SphinxTranscriber({ decoder: 'resident' });
    await stt.transcribe(silence(100), { language: 'en-US' });
    const audio = espeak('one two three four five six seven eight nine ten', { wordsPerMinute: 150 });
    let longestGap = 0;
    let last = performance.now();
    let decoding = true;
    const turns = (async () => {
      while (decoding) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
      }
    })();
    const started = performance.now();
    await stt.transcribe(audio, { language: 'en-US' });
    const took = performance.now() - started;
    decoding = false;
    await turns;
    // Decoding on the event loop would stop it for the whole decoding.
    assert.ok(longestGap < took / 2, `the event loop stalled ${longestGap} ms of a ${took} ms decoding`);
  });

  test('the pool reuses a loaded decoder and keeps at most maxIdle', residentOptions, async () => {
    requireSphinx();
    const addon = sphinxAddon();
    assert.ok(addon);
    const pool = new SphinxDecoderPool(addon, DECODER_ARGS, 1);
    const first = await pool.acquire();
    const second = await pool.acquire();
    pool.release(first);
    pool.release(second);
    assert.equal(pool.idleCount, 1);
    assert.equal(await pool.acquire(), first);
    pool.release(first);
    pool.drain();
    assert.equal(pool.idleCount, 0);
  });

  test('a cancelled utterance gives its decoder back, clean, for the next one', residentOptions, async () => {
    requireSphinx();
    const addon = sphinxAddon();
    assert.ok(addon);
    const pool = new SphinxDecoderPool(addon, DECODER_ARGS, 1);
    const partials: string[] = [];
    const dropped = pool.utterance((text) => partials.push(text));
    dropped.feed(espeak('one two three four five six', { wordsPerMinute: 150 }));
    dropped.cancel();
    assert.equal(await dropped.finish(), '');
    const next = pool.utterance(() => {});
    next.feed(espeak('hello world', { wordsPerMinute: 130 }));
    const heard = await next.finish();
    assert.ok(wordOverlap(heard, 'hello world') >= 0.5, `heard "${heard}"`);
    assert.ok(!/one|two|three/.test(heard), `the cancelled utterance leaked: "${heard}"`);
    assert.equal(pool.idleCount, 1);
    pool.drain();
  });

  test('a decoder that cannot load fails the utterance with an EngineError', residentOptions, async () => {
    requireSphinx();
    const stt = new SphinxTranscriber({ decoder: 'resident', modelDir: '/nonexistent/model' });
    const error = await rejection(stt.transcribe(silence(200), { language: 'en-US' }));
    assert.ok(isEngineError(error) && !error.retryable, String(error));
  });
});
