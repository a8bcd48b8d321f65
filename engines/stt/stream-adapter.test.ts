/**
 * The VAD adapter that makes batch engines stream, with a scripted batch engine and the energy VAD: what audio
 * each request carries (pre-roll before the speech, the whole speech, bounded length), the order of finals when
 * transcriptions overlap, and what happens to empty texts, failures, idle flushes and a consumer that leaves.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EnergyVad } from '../vad/providers/energy.ts';
import type { VadStream, VoiceActivityDetector } from '../vad/types.ts';
import {
  type BatchTranscriber,
  type IncrementalTranscriber,
  type IncrementalUtterance,
  VadSegmentedStream,
} from './stream-adapter.ts';
import { Recorder } from './testing/conformance.ts';
import { concat, pushAll, silence, syntheticSpeech } from './testing/speech.ts';
import type { SttStreamOptions } from './types.ts';

type Reply = string | Error | { text: string; delayMs: number };

/** A batch engine that answers from a script and records each request. */
class ScriptedTranscriber implements BatchTranscriber {
  readonly calls: { audio: Int16Array; options: SttStreamOptions }[] = [];
  constructor(private readonly replies: Reply[] = []) {}

  async transcribe(audio: Int16Array, options: SttStreamOptions): Promise<{ text: string }> {
    const index = this.calls.push({ audio, options }) - 1;
    const reply = this.replies[index] ?? `utterance ${index + 1}`;
    if (reply instanceof Error) throw reply;
    if (typeof reply === 'string') return { text: reply };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, reply.delayMs);
      options.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    });
    return { text: reply.text };
  }
}

/**
 * An engine that decodes while it is fed, as the resident PocketSphinx does: each utterance (piece) records
 * the audio it was fed, and its text is `piece <n>: <ms of audio fed>`.
 */
class ScriptedIncremental extends ScriptedTranscriber implements IncrementalTranscriber {
  readonly pieces: Int16Array[][] = [];

  utterance(_options: SttStreamOptions, onPartial: (text: string) => void): IncrementalUtterance {
    const fed: Int16Array[] = [];
    const index = this.pieces.push(fed);
    return {
      feed: (samples) => {
        fed.push(samples.slice());
        onPartial(`piece ${index} so far`);
      },
      finish: async () => ({ text: `piece ${index}: ${concat(...fed).length / 16} ms` }),
      cancel: () => undefined,
    };
  }
}

function filled(ms: number, value: number): Int16Array {
  return silence(ms).fill(value);
}

function finalsOf(recorder: Recorder): [string, boolean][] {
  return recorder.finals().map((f) => [f.text, f.endOfTurn]);
}

describe('VAD adapter: the audio of each request', () => {
  test('the whole utterance, from ~200 ms before the speech start, to a little after its end', async () => {
    const stt = new ScriptedTranscriber();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en-IN' });
    const recorder = new Recorder(stream);
    const speech = syntheticSpeech(1_000);
    pushAll(stream, concat(filled(600, 2), speech, filled(1_000, -2)));
    await stream.end();
    await recorder.done;
    assert.deepEqual(finalsOf(recorder), [['utterance 1', true]]);
    const sent = stt.calls[0]!.audio;
    assert.equal(stt.calls[0]!.options.language, 'en-IN');
    let lead = 0;
    while (sent[lead] === 2) lead++;
    // The speech may be detected one 20 ms window late (its first syllable rises from zero).
    assert.ok(lead >= 180 * 16 && lead <= 200 * 16, `pre-roll of ${lead / 16} ms`);
    assert.deepEqual(sent.subarray(lead, lead + speech.length), speech);
    const tail = sent.subarray(lead + speech.length);
    assert.ok(tail.every((v) => v === -2) && tail.length <= 500 * 16, `tail of ${tail.length / 16} ms`);
  });

  test('speech longer than maxUtteranceMs is cut into pieces, only the last ending the turn', async () => {
    const stt = new ScriptedTranscriber();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en', maxUtteranceMs: 1_000 });
    const recorder = new Recorder(stream);
    pushAll(stream, concat(silence(300), syntheticSpeech(3_500), silence(1_000)));
    await stream.end();
    await recorder.done;
    assert.deepEqual(finalsOf(recorder), [
      ['utterance 1', false],
      ['utterance 2', false],
      ['utterance 3', false],
      ['utterance 4', true],
    ]);
    assert.ok(stt.calls.every((c) => c.audio.length <= 1_000 * 16));
    assert.equal(recorder.events.filter((e) => e.type === 'speech_started').length, 1);
  });

  test('when the piece after a cut is heard as nothing, the text before the cut ends the turn', async () => {
    const stt = new ScriptedTranscriber(['first words', 'more words', '']);
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en', maxUtteranceMs: 1_000 });
    const recorder = new Recorder(stream);
    pushAll(stream, concat(silence(300), syntheticSpeech(2_500), silence(1_000)));
    await stream.end();
    await recorder.done;
    assert.equal(stt.calls.length, 3);
    assert.deepEqual(finalsOf(recorder), [
      ['first words', false],
      ['more words', true],
    ]);
  });
});

describe('VAD adapter: events', () => {
  test('finals keep utterance order when a later transcription finishes first', async () => {
    const stt = new ScriptedTranscriber([{ text: 'slow first', delayMs: 150 }, 'fast second']);
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    const utterance = concat(syntheticSpeech(600), silence(800));
    pushAll(stream, concat(silence(300), utterance, utterance));
    await stream.end();
    await recorder.done;
    assert.deepEqual(finalsOf(recorder), [
      ['slow first', true],
      ['fast second', true],
    ]);
    assert.deepEqual(
      recorder.events.map((e) => e.type),
      ['speech_started', 'speech_started', 'final', 'final'],
    );
  });

  test('an utterance heard as nothing gives no final; a failed one gives an error, and the next still works', async () => {
    const stt = new ScriptedTranscriber(['  ', new Error('server on fire'), 'third']);
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    const utterance = concat(syntheticSpeech(600), silence(800));
    pushAll(stream, concat(silence(300), utterance, utterance, utterance));
    await stream.end();
    await recorder.done;
    assert.deepEqual(
      recorder.events
        .filter((e) => e.type !== 'speech_started')
        .map((e) => (e.type === 'final' ? e.text : e.type)),
      ['error', 'third'],
    );
    assert.equal(recorder.errors()[0]?.message, 'server on fire');
  });

  test('flush() with nobody speaking sends nothing and emits nothing', async () => {
    const stt = new ScriptedTranscriber();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    pushAll(stream, silence(1_000));
    stream.flush();
    await stream.end();
    await recorder.done;
    assert.deepEqual(recorder.events, []);
    assert.equal(stt.calls.length, 0);
  });

  test('leaving the loop early aborts the transcription in flight', async () => {
    const stt = new ScriptedTranscriber([{ text: 'never heard', delayMs: 10_000 }]);
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    pushAll(stream, concat(silence(300), syntheticSpeech(600), silence(800)));
    for await (const event of stream) {
      if (event.type !== 'speech_started') continue;
      while (stt.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
      break;
    }
    assert.equal(stt.calls[0]!.options.signal?.aborted, true);
    await stream.end();
  });

  test('a VAD failure is an error event, and the stream goes on', async () => {
    const inner = new EnergyVad();
    let failures = 1;
    const flaky: VoiceActivityDetector = {
      name: 'flaky',
      windowSamples: inner.windowSamples,
      createStream(): VadStream {
        const stream = inner.createStream();
        return {
          push: (frame) =>
            failures-- > 0 ? Promise.reject(new Error('inference failed')) : stream.push(frame),
          reset: () => stream.reset(),
        };
      },
    };
    const stream = new VadSegmentedStream(new ScriptedTranscriber(), flaky, { language: 'en' });
    const recorder = new Recorder(stream);
    pushAll(stream, concat(silence(300), syntheticSpeech(600), silence(800)));
    await stream.end();
    await recorder.done;
    assert.deepEqual(
      recorder.events.map((e) => e.type),
      ['error', 'speech_started', 'final'],
    );
  });
});

describe('VAD adapter: an engine that decodes while the caller speaks', () => {
  test('the words are final at the first pause, long before the silence that ends the utterance', async () => {
    const stt = new ScriptedIncremental();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    // Only 200 ms of silence after the speech: far less than the 500 ms that ends the utterance.
    pushAll(stream, concat(silence(300), syntheticSpeech(800), silence(200)));
    const final = await recorder.waitFor((e) => e.type === 'final');
    assert.ok(final.type === 'final' && final.endOfTurn === false, JSON.stringify(final));
    assert.match(final.text, /^piece 1: /);
    assert.ok(!recorder.events.some((e) => e.type === 'utterance_end'));
    pushAll(stream, silence(600));
    await recorder.waitFor((e) => e.type === 'utterance_end');
    await stream.end();
    await recorder.done;
    assert.deepEqual(
      recorder.events.map((e) => e.type).filter((t) => t !== 'partial'),
      ['speech_started', 'final', 'utterance_end'],
    );
    assert.equal(stt.calls.length, 0, 'no batch request: the decoding was incremental');
  });

  test('speech after a pause is the next piece of the same utterance; no audio is lost between pieces', async () => {
    const stt = new ScriptedIncremental();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    const first = syntheticSpeech(700);
    const second = syntheticSpeech(600);
    pushAll(stream, concat(silence(300), first, silence(300), second, silence(1_000)));
    await stream.end();
    await recorder.done;
    const finals = finalsOf(recorder);
    assert.equal(finals.length, 2, JSON.stringify(recorder.events));
    assert.ok(finals.every(([, endOfTurn]) => !endOfTurn));
    // One speech segment for the VAD (the pause is shorter than the utterance's silence), one utterance_end.
    assert.equal(recorder.events.filter((e) => e.type === 'speech_started').length, 1);
    assert.equal(recorder.events.at(-1)?.type, 'utterance_end');
    // The pieces' audio, end to end, holds both stretches of speech whole and in order.
    const fed = concat(...stt.pieces.flat());
    const at = (part: Int16Array, from: number): number => {
      for (let i = from; i + part.length <= fed.length; i++) {
        if (fed[i] === part[0] && fed.subarray(i, i + part.length).every((v, k) => v === part[k])) return i;
      }
      return -1;
    };
    const firstAt = at(first, 0);
    assert.ok(firstAt >= 0, 'the first stretch of speech was fed whole');
    assert.ok(at(second, firstAt + first.length) > 0, 'the second stretch was fed whole, after the first');
  });

  test('pauseFinalMs 0: one final at the utterance end, ending the turn', async () => {
    const stt = new ScriptedIncremental();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en', pauseFinalMs: 0 });
    const recorder = new Recorder(stream);
    pushAll(
      stream,
      concat(silence(300), syntheticSpeech(700), silence(300), syntheticSpeech(600), silence(1_000)),
    );
    await stream.end();
    await recorder.done;
    assert.equal(finalsOf(recorder).length, 1);
    assert.equal(finalsOf(recorder)[0]![1], true);
    assert.ok(!recorder.events.some((e) => e.type === 'utterance_end'));
  });

  test('flush() in a pause after the final ends the utterance without another final', async () => {
    const stt = new ScriptedIncremental();
    const stream = new VadSegmentedStream(stt, new EnergyVad(), { language: 'en' });
    const recorder = new Recorder(stream);
    pushAll(stream, concat(silence(300), syntheticSpeech(800), silence(250)));
    await recorder.waitFor((e) => e.type === 'final');
    stream.flush();
    await recorder.waitFor((e) => e.type === 'utterance_end');
    await stream.end();
    await recorder.done;
    assert.equal(recorder.finals().length, 1);
  });
});
