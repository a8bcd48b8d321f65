/**
 * The suite every speech-to-text provider passes, through its streaming form (streaming providers directly,
 * batch ones through the VAD adapter). Each test pins one promise of `SttStream`:
 * - speech followed by silence yields exactly one `final`, with the expected words, ending the turn, after a
 *   `speech_started`;
 * - `flush()` forces the final of speech in progress, without waiting for silence or `end()`;
 * - `end()` gives the results of the speech so far, then ends the iteration;
 * - aborting the signal ends the iteration quietly and frees the provider's sockets and requests;
 * - nothing comes after the end, whatever is pushed afterwards.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SpeechToText, SttEvent, SttStream } from '../types.ts';
import { concat, pushAll, silence } from './speech.ts';

export interface ConformanceSubject {
  stt: SpeechToText;
  language: string;
  /** Speech alone; the suite adds silence around it. */
  utterance: Int16Array;
  expected: string;
  /** Default: the same words, ignoring case and punctuation. */
  matches?: (heard: string, expected: string) => boolean;
  /** Resolves once the provider holds no connection or request (its fake server is idle). */
  idle?: () => Promise<void>;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** A reason to skip the whole suite, or false to run it. */
  skip?: string | false;
  /** Per test; real engines are slower than fakes. */
  timeoutMs?: number;
}

/** Speech before the utterance, so a detector sees it start from quiet. */
const LEAD_SILENCE_MS = 300;
/** Silence after the utterance: longer than any provider's end-of-turn silence (adapter 500 ms, Deepgram 300). */
const TRAIL_SILENCE_MS = 1_500;

export function sttConformance(
  name: string,
  setup: () => Promise<ConformanceSubject>,
  options: ConformanceOptions = {},
): void {
  const testOptions = { skip: options.skip ?? false, timeout: options.timeoutMs ?? 20_000 };

  const withSubject = (run: (subject: ConformanceSubject) => Promise<void>) => async () => {
    const subject = await setup();
    try {
      await run(subject);
    } finally {
      await subject.close();
    }
  };

  describe(`${name}: STT conformance`, () => {
    test(
      'speech then silence gives exactly one final, with the expected text, and says the speech ended',
      testOptions,
      withSubject(async (s) => {
        const stream = s.stt.stream({ language: s.language });
        const recorder = new Recorder(stream);
        pushAll(stream, concat(silence(LEAD_SILENCE_MS), s.utterance, silence(TRAIL_SILENCE_MS)));
        await recorder.waitFor((e) => e.type === 'final');
        await stream.end();
        await recorder.done;
        const finals = recorder.finals();
        assert.equal(finals.length, 1, `finals: ${JSON.stringify(finals)}`);
        assertMatches(s, finals[0]!.text);
        // Either the final ends the turn, or it came at a pause and an utterance_end follows it.
        const after = recorder.events.slice(recorder.events.indexOf(finals[0]!) + 1);
        assert.ok(
          finals[0]!.endOfTurn || after.some((e) => e.type === 'utterance_end'),
          `the end of speech is not signalled: ${JSON.stringify(recorder.events)}`,
        );
        const started = recorder.events.findIndex((e) => e.type === 'speech_started');
        assert.ok(
          started >= 0 && started < recorder.events.indexOf(finals[0]!),
          'speech_started comes first',
        );
        assert.deepEqual(recorder.errors(), []);
      }),
    );

    test(
      'flush() forces the final of speech in progress',
      testOptions,
      withSubject(async (s) => {
        const stream = s.stt.stream({ language: s.language });
        const recorder = new Recorder(stream);
        pushAll(stream, concat(silence(LEAD_SILENCE_MS), s.utterance));
        stream.flush();
        const final = await recorder.waitFor((e) => e.type === 'final');
        assert.ok(final.type === 'final');
        assertMatches(s, final.text);
        await stream.end();
        await recorder.done;
        assert.equal(recorder.finals().length, 1);
        const after = recorder.events.slice(recorder.events.indexOf(final) + 1);
        assert.ok(
          final.endOfTurn || after.some((e) => e.type === 'utterance_end'),
          `the end of speech is not signalled: ${JSON.stringify(recorder.events)}`,
        );
      }),
    );

    test(
      'end() gives the results of the speech so far, then ends the iteration',
      testOptions,
      withSubject(async (s) => {
        const stream = s.stt.stream({ language: s.language });
        const recorder = new Recorder(stream);
        pushAll(stream, concat(silence(LEAD_SILENCE_MS), s.utterance));
        await stream.end();
        await recorder.done;
        const finals = recorder.finals();
        assert.equal(finals.length, 1, `finals: ${JSON.stringify(finals)}`);
        assertMatches(s, finals[0]!.text);
        assert.deepEqual(recorder.errors(), []);
      }),
    );

    test(
      'aborting the signal ends the iteration and frees sockets and requests',
      testOptions,
      withSubject(async (s) => {
        const controller = new AbortController();
        const stream = s.stt.stream({ language: s.language, signal: controller.signal });
        const recorder = new Recorder(stream);
        pushAll(stream, concat(silence(LEAD_SILENCE_MS), s.utterance, silence(TRAIL_SILENCE_MS)));
        // Once speech was heard, the provider is at work (a socket open, a request or a decoder running).
        await recorder.waitFor((e) => e.type === 'speech_started');
        controller.abort();
        await recorder.done;
        assert.ok(recorder.finals().length <= 1);
        assert.deepEqual(recorder.errors(), []);
        // Input after an abort is ignored, and ending is still allowed.
        pushAll(stream, s.utterance);
        stream.flush();
        await stream.end();
        await s.idle?.();
      }),
    );

    test(
      'an already aborted signal gives an empty stream',
      testOptions,
      withSubject(async (s) => {
        const stream = s.stt.stream({ language: s.language, signal: AbortSignal.abort() });
        const recorder = new Recorder(stream);
        pushAll(stream, concat(s.utterance, silence(TRAIL_SILENCE_MS)));
        await recorder.done;
        assert.deepEqual(recorder.events, []);
        await stream.end();
        await s.idle?.();
      }),
    );

    test(
      'no events after the end, whatever is pushed afterwards',
      testOptions,
      withSubject(async (s) => {
        const stream = s.stt.stream({ language: s.language });
        const iterator = stream[Symbol.asyncIterator]();
        pushAll(stream, concat(silence(LEAD_SILENCE_MS), s.utterance, silence(TRAIL_SILENCE_MS)));
        const ending = stream.end();
        while (!(await iterator.next()).done) {
          // drain
        }
        await ending;
        pushAll(stream, concat(s.utterance, silence(TRAIL_SILENCE_MS)));
        stream.flush();
        await stream.end();
        assert.equal((await iterator.next()).done, true);
        await s.idle?.();
      }),
    );
  });
}

function assertMatches(subject: ConformanceSubject, heard: string): void {
  const matches = subject.matches ?? sameWords;
  assert.ok(matches(heard, subject.expected), `heard "${heard}", expected "${subject.expected}"`);
}

function sameWords(heard: string, expected: string): boolean {
  const words = (text: string): string => (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).join(' ');
  return words(heard) === words(expected);
}

/** Reads a stream in the background and lets a test wait for an event. */
export class Recorder {
  readonly events: SttEvent[] = [];
  readonly done: Promise<void>;
  #finished = false;
  #waiters: (() => void)[] = [];

  constructor(stream: SttStream) {
    this.done = (async () => {
      try {
        for await (const event of stream) {
          this.events.push(event);
          this.#wake();
        }
      } finally {
        this.#finished = true;
        this.#wake();
      }
    })();
  }

  /** The first event (from the start) that satisfies `predicate`; rejects if the stream ends without one. */
  async waitFor(predicate: (event: SttEvent) => boolean): Promise<SttEvent> {
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (this.#finished)
        throw new Error(`stream ended without the awaited event: ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  finals(): Extract<SttEvent, { type: 'final' }>[] {
    return this.events.filter((e): e is Extract<SttEvent, { type: 'final' }> => e.type === 'final');
  }

  errors(): Error[] {
    return this.events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
