/**
 * Local eSpeak NG: every espeak voice of the catalogue speaks a native-script sentence of its language (plausible
 * length, above silence); speed maps to eSpeak's rate; SSML-special characters are spoken as text; the first chunk
 * comes while only the first sentence has been asked of the runtime; syntheses sharing one runtime never mix
 * their audio; a bad voice does not disturb the next job.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { measureLevel } from '../../codecs/index.ts';
import { isEngineError } from '../errors.ts';
import { VoiceCatalogue } from './catalogue.ts';
import { EspeakSynthesizer, espeakRate } from './providers/espeak.ts';
import { EspeakRuntime } from './providers/espeak-runtime.ts';
import { escapeForEspeak } from './providers/espeak-wasm.ts';
import { assertSpeech, collect } from './testing/conformance.ts';
import { SENTENCES_BY_LANGUAGE } from './testing/sentences-by-language.ts';

const SENTENCES = SENTENCES_BY_LANGUAGE;

const runtime = new EspeakRuntime();
const tts = new EspeakSynthesizer({ runtime });
after(() => runtime.close());

function speak(text: string, voice = 'en+f3', speed?: number) {
  return collect(tts.synthesize({ text, voice, language: 'en-IN', ...(speed ? { speed } : {}) }));
}

describe('eSpeak NG speaks every language of the catalogue', () => {
  const voices = VoiceCatalogue.load().voices.filter((v) => v.engine === 'espeak');
  test('the catalogue has a sentence for each eSpeak language', () => {
    const languages = new Set(voices.map((v) => v.language.split('-')[0]!));
    assert.deepEqual([...languages].sort(), Object.keys(SENTENCES).sort());
  });
  for (const voice of voices) {
    const text = SENTENCES[voice.language.split('-')[0]!] ?? '';
    test(`${voice.id} (${voice.engine_voice}) speaks ${voice.language}`, async () => {
      const audio = await collect(
        tts.synthesize({ text, voice: voice.engine_voice, language: voice.language }),
      );
      assertSpeech(audio, text);
      // Native script is read as words, not skipped: well over a second for these sentences.
      assert.ok(audio.durationMs > 1500, `${audio.durationMs} ms`);
    });
  }
});

describe('EspeakSynthesizer', () => {
  test('speed maps to eSpeak words per minute, clamped to 80-450', () => {
    assert.equal(espeakRate(), 175);
    assert.equal(espeakRate(0.5), 88);
    assert.equal(espeakRate(2), 350);
    assert.equal(espeakRate(0.1), 80);
    assert.equal(espeakRate(10), 450);
    assert.throws(
      () => espeakRate(0),
      (error) => isEngineError(error) && !error.retryable,
    );
  });

  test('faster speech is shorter', async () => {
    const text = SENTENCES['en']!;
    const [slow, normal, fast] = await Promise.all([0.5, 1, 2].map((speed) => speak(text, 'en+m3', speed)));
    assert.ok(slow!.durationMs > normal!.durationMs * 1.4, `${slow!.durationMs} vs ${normal!.durationMs}`);
    assert.ok(normal!.durationMs > fast!.durationMs * 1.4, `${normal!.durationMs} vs ${fast!.durationMs}`);
  });

  test('chunks are 100 ms of 16 kHz audio, the last one possibly shorter', async () => {
    const audio = await speak('One sentence. And another one.');
    assert.ok(audio.chunks.slice(0, -1).every((chunk) => chunk.length === 1600));
    assert.ok(audio.chunks.at(-1)!.length <= 1600);
  });

  test('SSML-special characters are escaped and spoken as text', async () => {
    assert.equal(escapeForEspeak('a < b & c > d'), 'a &lt; b &amp; c &gt; d');
    const marked = await speak('Tom <b>and</b> Jerry');
    const plain = await speak('Tom and Jerry');
    assert.ok(marked.durationMs > plain.durationMs, 'the tag is read, not swallowed as markup');
  });

  test('a request without a voice speaks its language default', async () => {
    const audio = await collect(tts.synthesize({ text: SENTENCES['hi']!, voice: '', language: 'hi-IN' }));
    assertSpeech(audio, SENTENCES['hi']!);
  });

  test('the first chunk comes while only the first sentence has been asked of the runtime', async () => {
    const asked: string[] = [];
    const spy = new EspeakRuntime();
    const speakOne = spy.speak.bind(spy);
    spy.speak = (text, voice, rate, signal) => {
      asked.push(text);
      return speakOne(text, voice, rate, signal);
    };
    try {
      const stream = new EspeakSynthesizer({ runtime: spy }).synthesize({
        text: 'First sentence here. Second sentence here. Third sentence here.',
        voice: 'en',
        language: 'en',
      });
      for await (const _chunk of stream) {
        assert.deepEqual(asked, ['First sentence here.']);
        break;
      }
    } finally {
      await spy.close();
    }
  });

  test('syntheses sharing one runtime never mix their audio', async () => {
    // eSpeak varies a few samples from run to run, so compare lengths: mixed-in audio would add whole blocks.
    const texts = [SENTENCES['hi']!, SENTENCES['en']!, SENTENCES['ta']!];
    const voices = ['hi+m3', 'en+f3', 'ta+m3'];
    const alone: number[] = [];
    for (const [i, text] of texts.entries()) alone.push((await speak(text, voices[i])).durationMs);
    const together = await Promise.all(texts.map((text, i) => speak(text, voices[i])));
    for (const [i, audio] of together.entries()) {
      assert.ok(
        Math.abs(audio.durationMs - alone[i]!) < 50,
        `${voices[i]}: ${audio.durationMs} vs ${alone[i]} ms`,
      );
    }
  });

  test('an unknown voice fails that job only', async () => {
    const [bad, good] = await Promise.allSettled([speak('Hello.', 'zz+f3'), speak('Hello there.', 'en')]);
    assert.equal(bad.status, 'rejected');
    assert.equal(good.status, 'fulfilled');
    if (good.status === 'fulfilled') assert.ok(measureLevel(good.value.samples).rmsDbfs > -40);
  });

  test('a closed runtime refuses work with a non-retryable EngineError', async () => {
    const closed = new EspeakRuntime();
    await closed.close();
    const stream = new EspeakSynthesizer({ runtime: closed }).synthesize({
      text: 'Hi.',
      voice: 'en',
      language: 'en',
    });
    await assert.rejects(collect(stream), (error) => isEngineError(error) && !error.retryable);
  });
});
