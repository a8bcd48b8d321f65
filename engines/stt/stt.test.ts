/**
 * The shared STT conformance suite (testing/conformance.ts) for every provider: openai against the fake
 * transcription server, deepgram against the fake live server, sphinx for real (when PocketSphinx is installed;
 * required in CI). Batch providers stream through the VAD adapter with the energy detector.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EnergyVad } from '../vad/providers/energy.ts';
import { createSpeechToText } from './index.ts';
import { DeepgramTranscriber } from './providers/deepgram.ts';
import { OpenAiTranscriber } from './providers/openai.ts';
import { SphinxTranscriber } from './providers/sphinx.ts';
import { sttConformance } from './testing/conformance.ts';
import { FakeDeepgramServer } from './testing/fake-deepgram-server.ts';
import { FakeOpenAiTranscriptionServer } from './testing/fake-openai-transcription-server.ts';
import { requireSphinx, residentSphinxSkip, sphinxSkip } from './testing/local-engines.ts';
import { espeak, syntheticSpeech, wordOverlap } from './testing/speech.ts';

const EXPECTED = 'I would like to book an appointment.';

sttConformance('openai (fake server)', async () => {
  const server = await FakeOpenAiTranscriptionServer.start({ text: EXPECTED, latencyMs: 20 });
  return {
    stt: new OpenAiTranscriber({ baseURL: server.baseURL, apiKey: 'sk-test', vad: new EnergyVad() }),
    language: 'en-IN',
    utterance: syntheticSpeech(1_200),
    expected: EXPECTED,
    idle: () => server.idle(),
    close: () => server.close(),
  };
});

sttConformance('deepgram (fake server)', async () => {
  const server = await FakeDeepgramServer.start({
    transcripts: [EXPECTED, 'and something else'],
    latencyMs: 5,
  });
  return {
    stt: new DeepgramTranscriber({ baseUrl: server.baseUrl, apiKey: 'dg-test' }),
    language: 'en-IN',
    utterance: syntheticSpeech(1_200),
    expected: EXPECTED,
    idle: () => server.until(() => server.activeConnections === 0),
    close: () => server.close(),
  };
});

/** What PocketSphinx's general model hears of eSpeak's voice is rough: two of the five words are enough. */
const SPHINX_PHRASE = 'what is the weather today';

for (const decoder of ['resident', 'spawn'] as const) {
  sttConformance(
    `sphinx, ${decoder} decoder (PocketSphinx, eSpeak NG speech)`,
    async () => {
      requireSphinx();
      return {
        stt: new SphinxTranscriber({ decoder, vad: new EnergyVad() }),
        language: 'en-US',
        utterance: espeak(SPHINX_PHRASE, { wordsPerMinute: 170 }),
        expected: SPHINX_PHRASE,
        matches: (heard, expected) => wordOverlap(heard, expected) >= 0.4,
        close: async () => {},
      };
    },
    { skip: decoder === 'resident' ? residentSphinxSkip : sphinxSkip, timeoutMs: 60_000 },
  );
}

describe('createSpeechToText', () => {
  test('builds each provider from its config', () => {
    const vad = new EnergyVad();
    assert.ok(createSpeechToText({ provider: 'deepgram', apiKey: 'k' }) instanceof DeepgramTranscriber);
    const openai = createSpeechToText({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1' }, { vad });
    assert.ok(openai instanceof OpenAiTranscriber && !openai.capabilities.streaming);
    if (SphinxTranscriber.available()) {
      const sphinx = createSpeechToText({ provider: 'sphinx' }, { vad });
      assert.deepEqual(sphinx.languages, ['en-IN', 'en-US', 'en-GB']);
    }
  });

  test('a batch provider without a VAD is refused', () => {
    assert.throws(() => createSpeechToText({ provider: 'openai' }), /voice activity detector/);
  });
});
