import type { Logger } from 'pino';
import type { EngineConfig } from '../core/config.ts';
import { createLanguageModel } from '../engines/llm/index.ts';
import { type SpeechCoverage, speechCoverage } from '../engines/stt/coverage.ts';
import { createSpeechToText, type SpeechToText, SphinxTranscriber } from '../engines/stt/index.ts';
import { VoiceCatalogue } from '../engines/tts/catalogue.ts';
import { createTextToSpeech, type VoiceRouter } from '../engines/tts/index.ts';
import { LIVE_MAX_BACKLOG_WINDOWS, SileroVad } from '../engines/vad/providers/silero.ts';
import type { LatencyLabels } from '../pipeline/metrics.ts';
import type { SessionEngines } from '../pipeline/session.ts';

export interface CallEngines {
  /** Without an STT (`engines.stt` undefined), calls take turns by voice activity alone. */
  engines: SessionEngines;
  /** Which languages get words and which turn-taking only. */
  coverage: SpeechCoverage;
  names: Omit<LatencyLabels, 'language'>;
  /** The voices, also used by the sandbox carrier's simulated callees. */
  voices: VoiceRouter;
  close(): Promise<void>;
}

/**
 * The engines every call on this node shares: one Silero model, one eSpeak NG runtime (plus an
 * OpenAI-compatible speech endpoint when configured), the configured STT and LLM. Per-call state lives in the
 * streams each call opens, never here.
 */
export async function buildCallEngines(config: EngineConfig, logger: Logger): Promise<CallEngines> {
  const voices = createTextToSpeech({
    espeak: { warmup: true },
    ...(config.ttsOpenai ? { openai: { apiKey: '', ...config.ttsOpenai } } : {}),
  });
  const vad = await SileroVad.load({ maxBacklogWindows: LIVE_MAX_BACKLOG_WINDOWS });
  const llm = createLanguageModel(config.llm);
  const stt = speechToText(config.stt, vad);
  const coverage = speechCoverage(stt.engine, VoiceCatalogue.load().languages());
  if (!stt.engine) {
    logger.warn(
      { reason: stt.unavailable, turn_taking_only: coverage.turn_taking_only },
      'no speech-to-text engine: calls take turns by voice activity alone, without words',
    );
  } else {
    logger.info(coverage, 'speech-to-text languages');
  }
  return {
    engines: { llm, stt: stt.engine, vad, speaker: voices },
    coverage,
    names: { stt: stt.engine?.provider ?? 'none', llm: llm.provider, tts: 'router' },
    voices,
    close: () => voices.close(),
  };
}

function speechToText(
  config: EngineConfig['stt'],
  vad: SileroVad,
): { engine: SpeechToText; unavailable: undefined } | { engine: undefined; unavailable: string } {
  const remote = {
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.model ? { model: config.model } : {}),
  };
  const sphinx = {
    provider: 'sphinx' as const,
    ...(config.sphinxModelDir ? { modelDir: config.sphinxModelDir } : {}),
  };
  switch (config.provider) {
    case 'openai':
      return {
        engine: createSpeechToText(
          { provider: 'openai', ...remote, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}) },
          { vad },
        ),
        unavailable: undefined,
      };
    case 'deepgram':
      return {
        engine: createSpeechToText({
          provider: 'deepgram',
          ...remote,
          ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
        }),
        unavailable: undefined,
      };
    case 'sphinx':
      return { engine: createSpeechToText(sphinx, { vad }), unavailable: undefined };
    case 'auto':
      return SphinxTranscriber.available(sphinx)
        ? { engine: createSpeechToText(sphinx, { vad }), unavailable: undefined }
        : {
            engine: undefined,
            unavailable:
              'no speech-to-text engine: install PocketSphinx (apt-get install pocketsphinx pocketsphinx-en-us) or set STT_PROVIDER',
          };
  }
}
