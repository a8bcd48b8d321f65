import path from 'node:path';
import { BenchChild } from '../api-child.ts';
import type { FromEngines, ToEngines } from '../pipeline-protocol.ts';
import type { Cleanups } from '../support/cleanups.ts';

/**
 * Remote engines of fixed latency for the conversational calls, as `bench:pipeline` uses them and as the
 * section 10 budget assumes ("Silero VAD in process, remote engines"): `bench/pipeline-engines.ts` in a process
 * of its own serves a Deepgram-compatible live STT, an OpenAI-compatible chat model (first token after
 * 300 ms) and OpenAI-compatible speech (first audio after 100 ms) on 127.0.0.1. Without them calls would run
 * on the local PocketSphinx decoder, which on a small machine takes the cores the measured process needs.
 */

export interface FakeEngines {
  pid: number;
  /** The platform settings that point its engines at the fakes. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The agent's voice must be one the OpenAI-compatible speech endpoint serves. */
export const FAKE_ENGINES_VOICE = { voice_id: 'openai-alloy', language: 'en-IN' } as const;

const START_TIMEOUT_MS = 60_000;

export async function startFakeEngines(
  root: string,
  env: NodeJS.ProcessEnv,
  cleanups: Cleanups,
): Promise<FakeEngines> {
  const child = new BenchChild<ToEngines, FromEngines>(
    'fake engines',
    path.join(root, 'bench/pipeline-engines.ts'),
    { cwd: root, env, execArgv: ['--import', 'tsx'], stdout: process.stderr },
  );
  const stop = cleanups.defer('stop the fake engines', () => child.stop({ type: 'stop' }));
  try {
    const { urls, pid } = await child.next('ready', START_TIMEOUT_MS);
    return {
      pid,
      env: {
        STT_PROVIDER: 'deepgram',
        STT_BASE_URL: urls.stt,
        STT_API_KEY: 'bench',
        LLM_PROVIDER: 'openai',
        LLM_BASE_URL: urls.llm,
        LLM_API_KEY: 'bench',
        LLM_MODEL: 'fake-model',
        TTS_BASE_URL: urls.tts,
        TTS_API_KEY: 'bench',
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
