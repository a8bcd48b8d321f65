/**
 * EspeakRuntime when its thread fails, with a scripted worker speaking the runtime's protocol: a failed load and
 * a thread that dies mid-job are retryable EngineErrors for the jobs they hit, the next job gets a fresh thread,
 * and a death after audio went out is not retryable for the synthesis it interrupted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isEngineError } from '../errors.ts';
import { EspeakSynthesizer } from './providers/espeak.ts';
import { EspeakRuntime } from './providers/espeak-runtime.ts';
import { collect } from './testing/conformance.ts';

const FAKE_WORKER = new URL('./testing/fake-espeak-worker.ts', import.meta.url);

function withRuntime(entry: URL, body: (tts: EspeakSynthesizer, runtime: EspeakRuntime) => Promise<void>) {
  return async () => {
    const runtime = new EspeakRuntime({ workerEntry: entry });
    try {
      await body(new EspeakSynthesizer({ runtime }), runtime);
    } finally {
      await runtime.close();
    }
  };
}

const speak = (tts: EspeakSynthesizer, text: string) =>
  collect(tts.synthesize({ text, voice: 'en', language: 'en' }));
const retryable = (expected: boolean) => (error: unknown) =>
  isEngineError(error) && error.retryable === expected;

describe('EspeakRuntime failures', () => {
  test(
    'the scripted worker speaks',
    withRuntime(FAKE_WORKER, async (tts, runtime) => {
      const audio = await speak(tts, 'Hello.');
      assert.ok(audio.samples.length > 4000);
      assert.equal(runtime.pendingJobs, 0);
    }),
  );

  test(
    'a failed load is a retryable EngineError',
    withRuntime(new URL('?load=fail', FAKE_WORKER), async (tts, runtime) => {
      await assert.rejects(speak(tts, 'Hello.'), retryable(true));
      await assert.rejects(runtime.warmup(), retryable(true));
      assert.equal(runtime.pendingJobs, 0);
    }),
  );

  test(
    'a thread that dies mid-job fails that job, retryably, and the next job gets a fresh thread',
    withRuntime(FAKE_WORKER, async (tts, runtime) => {
      await assert.rejects(speak(tts, 'crash'), retryable(true));
      assert.ok((await speak(tts, 'Hello again.')).samples.length > 4000);
      assert.equal(runtime.pendingJobs, 0);
    }),
  );

  test(
    'a death after audio went out is not retryable',
    withRuntime(FAKE_WORKER, async (tts) => {
      await assert.rejects(speak(tts, 'crash-later'), retryable(false));
    }),
  );
});
