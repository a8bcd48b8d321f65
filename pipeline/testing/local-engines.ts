/**
 * The engines session tests run with: eSpeak NG (WASM) speaks for the agent and makes the caller's voice, Silero
 * hears the caller, and the OpenAI-compatible STT provider transcribes through a fake transcription server on
 * loopback whose answers follow what the caller said (see caller-script.ts).
 */
import { OpenAiTranscriber } from '../../engines/stt/providers/openai.ts';
import { FakeOpenAiTranscriptionServer } from '../../engines/stt/testing/fake-openai-transcription-server.ts';
import {
  createTextToSpeech,
  type OpenAiSynthesizerOptions,
  type VoiceRouter,
} from '../../engines/tts/index.ts';
import { SileroVad } from '../../engines/vad/providers/silero.ts';

export interface LocalEngines {
  tts: VoiceRouter;
  vad: SileroVad;
  sttServer: FakeOpenAiTranscriptionServer;
  stt: OpenAiTranscriber;
  close(): Promise<void>;
}

/**
 * The STT retries a failed request once after this pause; short, so that a test of failures does not wait on
 * the production default.
 */
const TEST_STT_RETRY_DELAY_MS = 20;

export async function localEngines(
  options: { openaiSpeech?: OpenAiSynthesizerOptions } = {},
): Promise<LocalEngines> {
  const tts = createTextToSpeech({
    espeak: true,
    ...(options.openaiSpeech ? { openai: options.openaiSpeech } : {}),
  });
  const vad = await SileroVad.load();
  const sttServer = await FakeOpenAiTranscriptionServer.start();
  const stt = new OpenAiTranscriber({
    baseURL: sttServer.baseURL,
    apiKey: 'test',
    vad,
    retryDelayMs: TEST_STT_RETRY_DELAY_MS,
  });
  return {
    tts,
    vad,
    sttServer,
    stt,
    close: async () => {
      await tts.close();
      await sttServer.close();
    },
  };
}
