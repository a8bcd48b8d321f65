/**
 * The shared TextToSpeech conformance suite, run for every provider: OpenAI-compatible speech against the fake
 * server (a real local HTTP server), and local eSpeak NG for real.
 */

import { EspeakSynthesizer } from './providers/espeak.ts';
import { EspeakRuntime } from './providers/espeak-runtime.ts';
import { OpenAiSynthesizer } from './providers/openai.ts';
import { ttsConformance } from './testing/conformance.ts';
import { FakeOpenAiSpeechServer } from './testing/fake-openai-speech-server.ts';

let server: FakeOpenAiSpeechServer | undefined;
ttsConformance({
  name: 'openai (fake server)',
  async create() {
    // Paced at 10x real time, so a long text is still streaming when the abort tests abort it.
    server = await FakeOpenAiSpeechServer.start({ bytesPerSecond: 480_000 });
    return new OpenAiSynthesizer({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'tts-1' });
  },
  close: async () => server?.close(),
  voice: 'alloy',
  language: 'en-IN',
  text: 'Your order will arrive tomorrow morning. Is there anything else I can help with?',
  unknownVoice: 'no-such-voice',
  inFlight: () => server?.openRequests ?? 0,
});

const runtime = new EspeakRuntime();
ttsConformance({
  name: 'espeak (eSpeak NG WASM)',
  create: () => new EspeakSynthesizer({ runtime }),
  close: () => runtime.close(),
  voice: 'hi+f3',
  language: 'hi-IN',
  text: 'नमस्ते, आपका ऑर्डर कल सुबह पहुँच जाएगा। क्या मैं और कुछ मदद कर सकती हूँ?',
  unknownVoice: 'xx+f3',
  inFlight: () => runtime.pendingJobs,
});
