/**
 * The suite every TextToSpeech provider passes (STYLE.md: one shared conformance suite per engine kind).
 * It pins down the interface's contract: PCM16 16 kHz chunks of a plausible total length for the text, not
 * silent; empty text yields nothing; an unknown voice is a non-retryable EngineError; aborting (before or during)
 * ends the stream without more chunks and releases the work (no request or job left in flight); a consumer that
 * stops early releases it too; two syntheses at once both complete.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CANONICAL_RATE, measureLevel } from '../../../codecs/index.ts';
import { isEngineError } from '../../errors.ts';
import type { SynthesisRequest, TextToSpeech } from '../types.ts';

export interface TtsConformanceSubject {
  name: string;
  create(): TextToSpeech | Promise<TextToSpeech>;
  close?(): Promise<void>;
  voice: string;
  language: string;
  /** A short sentence in the voice's language. */
  text: string;
  /** A voice the engine does not have. */
  unknownVoice: string;
  /** Requests or jobs still in flight: must come back to 0 once a synthesis ends, however it ends. */
  inFlight(): number;
}

/** Quietest level counted as speech: eSpeak speaks near -20 dBFS, silence measures -120. */
export const MIN_SPEECH_DBFS = -40;

/**
 * How long released work may take to be seen as released (a socket close reaching the server, a worker finishing
 * its current 100 ms block): far above the few milliseconds it takes, for a loaded 2-core CI machine.
 */
const RELEASE_TIMEOUT_MS = 5_000;
/** Polling step while waiting for release: fine enough not to slow the suite, coarse enough to cost nothing. */
const RELEASE_POLL_MS = 10;

export interface Collected {
  chunks: Int16Array[];
  samples: Int16Array;
  durationMs: number;
}

export async function collect(stream: AsyncIterable<Int16Array>): Promise<Collected> {
  const chunks: Int16Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const samples = new Int16Array(chunks.reduce((sum, c) => sum + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    samples.set(chunk, offset);
    offset += chunk.length;
  }
  return { chunks, samples, durationMs: (samples.length / CANONICAL_RATE) * 1000 };
}

/** Speech takes between 4 and 40 characters a second (code points: Indic marks count), plus some padding. */
export function plausibleDurationMs(text: string): { min: number; max: number } {
  const chars = Array.from(text.trim()).length;
  return { min: (chars / 40) * 1000, max: (chars / 4) * 1000 + 2000 };
}

/** Asserts audio that could be `text` spoken: plausible length, above silence, well-formed chunks. */
export function assertSpeech(audio: Collected, text: string): void {
  assert.ok(audio.chunks.length > 0, 'no chunks');
  for (const chunk of audio.chunks) {
    assert.ok(chunk instanceof Int16Array, 'chunks are Int16Array');
    assert.ok(chunk.length > 0, 'no empty chunks');
  }
  const { min, max } = plausibleDurationMs(text);
  assert.ok(
    audio.durationMs >= min && audio.durationMs <= max,
    `duration ${audio.durationMs.toFixed(0)} ms outside ${min.toFixed(0)}-${max.toFixed(0)} ms for ${JSON.stringify(text)}`,
  );
  const level = measureLevel(audio.samples).rmsDbfs;
  assert.ok(level > MIN_SPEECH_DBFS, `RMS ${level.toFixed(1)} dBFS is silence`);
}

export async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, RELEASE_POLL_MS));
  }
}

export function ttsConformance(subject: TtsConformanceSubject): void {
  describe(`TextToSpeech conformance: ${subject.name}`, () => {
    let tts: TextToSpeech;
    const request = (overrides: Partial<SynthesisRequest> = {}): SynthesisRequest => ({
      text: subject.text,
      voice: subject.voice,
      language: subject.language,
      ...overrides,
    });
    const long = Array.from({ length: 8 }, () => subject.text).join(' ');

    before(async () => {
      tts = await subject.create();
    });
    after(async () => {
      await subject.close?.();
    });

    test('declares itself streaming with a provider name', () => {
      assert.equal(typeof tts.provider, 'string');
      assert.equal(tts.capabilities.streaming, true);
    });

    test('yields PCM16 16 kHz chunks of a plausible length for the text, not silent', async () => {
      assertSpeech(await collect(tts.synthesize(request())), subject.text);
      await waitUntil(() => subject.inFlight() === 0, 'nothing is in flight');
    });

    test('empty and whitespace-only text yields nothing, without error', async () => {
      for (const text of ['', '   ', '\n\t '])
        assert.equal((await collect(tts.synthesize(request({ text })))).chunks.length, 0);
    });

    test('an unknown voice is a non-retryable EngineError', async () => {
      await assert.rejects(collect(tts.synthesize(request({ voice: subject.unknownVoice }))), (error) => {
        assert.ok(isEngineError(error), `not an EngineError: ${String(error)}`);
        assert.equal(error.retryable, false);
        return true;
      });
      await waitUntil(() => subject.inFlight() === 0, 'nothing is in flight');
    });

    test('aborting mid-stream ends it: no more chunks, nothing left in flight', async () => {
      const controller = new AbortController();
      let after = 0;
      let seen = 0;
      for await (const _chunk of tts.synthesize(request({ text: long, signal: controller.signal }))) {
        if (controller.signal.aborted) after++;
        else if (++seen === 2) controller.abort();
      }
      assert.equal(seen, 2);
      assert.equal(after, 0, 'chunks after abort');
      await waitUntil(() => subject.inFlight() === 0, 'the aborted work is released');
    });

    test('an already aborted signal yields nothing', async () => {
      const audio = await collect(tts.synthesize(request({ signal: AbortSignal.abort() })));
      assert.equal(audio.chunks.length, 0);
      assert.equal(subject.inFlight(), 0);
    });

    test('a consumer that stops early releases the work', async () => {
      for await (const _chunk of tts.synthesize(request({ text: long }))) break;
      await waitUntil(() => subject.inFlight() === 0, 'the abandoned work is released');
    });

    test('two syntheses at once both complete', async () => {
      const [a, b] = await Promise.all([
        collect(tts.synthesize(request())),
        collect(tts.synthesize(request())),
      ]);
      assertSpeech(a, subject.text);
      assertSpeech(b, subject.text);
    });
  });
}
