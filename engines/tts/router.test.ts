/**
 * Voice routing: a catalogue voice id picks its engine and is spoken with the engine's own voice name and a
 * language the voice speaks; unknown voices and unconfigured engines are non-retryable EngineErrors; and
 * `createTextToSpeech` wires real engines (eSpeak, and OpenAI-compatible speech against the fake server).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { VoiceCatalogue } from './catalogue.ts';
import { createTextToSpeech } from './index.ts';
import { VoiceRouter } from './router.ts';
import { assertSpeech, collect } from './testing/conformance.ts';
import { FakeOpenAiSpeechServer } from './testing/fake-openai-speech-server.ts';
import type { SynthesisRequest, TextToSpeech } from './types.ts';

/** A scripted engine that records what it was asked and answers one chunk of silence. */
class RecordingTts implements TextToSpeech {
  readonly capabilities = { streaming: true };
  readonly requests: SynthesisRequest[] = [];
  constructor(readonly provider: string) {}
  async *synthesize(request: SynthesisRequest): AsyncGenerator<Int16Array> {
    this.requests.push(request);
    yield new Int16Array(160);
  }
}

const catalogue = VoiceCatalogue.load();

function isNonRetryable(error: unknown): boolean {
  return isEngineError(error) && !error.retryable;
}

describe('VoiceRouter', () => {
  test('every catalogue voice goes to its engine with its engine voice', async () => {
    const engines = { espeak: new RecordingTts('espeak'), openai: new RecordingTts('openai') };
    const router = new VoiceRouter(catalogue, engines);
    for (const voice of catalogue.voices) {
      await collect(router.synthesize({ voiceId: voice.id, text: 'Hello.' }));
      const last = engines[voice.engine].requests.at(-1);
      assert.equal(last?.voice, voice.engine_voice);
      assert.equal(last?.language, voice.language);
    }
  });

  test('passes speed and signal, and a language only when the voice speaks it', async () => {
    const espeak = new RecordingTts('espeak');
    const router = new VoiceRouter(catalogue, { espeak });
    const signal = new AbortController().signal;
    await collect(
      router.synthesize({ voiceId: 'local-hi-female', text: 'x', speed: 1.5, signal, language: 'hi-IN' }),
    );
    await collect(router.synthesize({ voiceId: 'local-hi-female', text: 'x', language: 'fr-FR' }));
    assert.deepEqual(
      espeak.requests.map((r) => [r.voice, r.language, r.speed, r.signal]),
      [
        ['hi+f3', 'hi-IN', 1.5, signal],
        ['hi+f3', 'hi-IN', undefined, undefined],
      ],
    );
  });

  test('an unknown voice id and an unconfigured engine are non-retryable EngineErrors', async () => {
    const router = new VoiceRouter(catalogue, { espeak: new RecordingTts('espeak') });
    await assert.rejects(
      collect(router.synthesize({ voiceId: 'no-such-voice', text: 'Hi.' })),
      isNonRetryable,
    );
    const openaiVoice = catalogue.voices.find((v) => v.engine === 'openai')!;
    assert.equal(router.available(openaiVoice.id), false);
    assert.equal(router.available('local-hi-male'), true);
    await assert.rejects(
      collect(router.synthesize({ voiceId: openaiVoice.id, text: 'Hi.' })),
      isNonRetryable,
    );
  });
});

describe('createTextToSpeech', () => {
  test('routes local voices to eSpeak and OpenAI voices to the configured endpoint', async () => {
    const server = await FakeOpenAiSpeechServer.start();
    const router = createTextToSpeech({
      openai: { baseURL: server.baseURL, apiKey: 'sk-test', model: 'tts-1' },
    });
    try {
      const text = 'Your order ships today.';
      assertSpeech(await collect(router.synthesize({ voiceId: 'local-en-female', text })), text);
      const openaiVoice = catalogue.voices.find((v) => v.engine === 'openai')!;
      assertSpeech(await collect(router.synthesize({ voiceId: openaiVoice.id, text })), text);
      assert.deepEqual(
        server.requests.map((r) => r.body['voice']),
        [openaiVoice.engine_voice],
      );
    } finally {
      await router.close();
      await server.close();
    }
  });

  test('without eSpeak or OpenAI configuration their voices are unavailable', () => {
    const router = createTextToSpeech({ espeak: false });
    assert.equal(router.available('local-hi-male'), false);
    assert.equal(router.engine('openai'), undefined);
  });
});
