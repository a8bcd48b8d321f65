/**
 * `bench:conversation`'s judging on a tiny corpus of observations (what a caller heard), and its scripted STT
 * timing messages from the audio it receives, so neither can rot between benchmark runs.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CaseObservation, judge, summarize } from '../../bench/conversation/judge.ts';
import { noise } from '../../bench/conversation/render.ts';
import { ScriptedRecognizer } from '../../bench/conversation/scripted-stt.ts';
import { silence, syntheticSpeech } from '../../engines/stt/testing/speech.ts';

const observation = (o: Partial<CaseObservation> & Pick<CaseObservation, 'category'>): CaseObservation => ({
  id: o.category,
  overAgent: false,
  beganMs: 0,
  sounds: [],
  heard: [],
  clears: [],
  ...o,
});

describe('judging a conversation by what the caller heard', () => {
  test('a reply after the last word is right, with its latency; one inside a pause is wrong', () => {
    const sounds = [
      { startMs: 1000, endMs: 2000 },
      { startMs: 2800, endMs: 3500 },
    ];
    const waited = judge(
      observation({ category: 'connective_pause', sounds, heard: [{ startMs: 4000, endMs: 6000 }] }),
    );
    assert.equal(waited.correct, true);
    assert.equal(waited.responseLatencyMs, 500);
    const cutIn = judge(
      observation({ category: 'connective_pause', sounds, heard: [{ startMs: 2300, endMs: 5000 }] }),
    );
    assert.equal(cutIn.correct, false);
    assert.equal(cutIn.why, 'answered before the caller finished');
    assert.equal(judge(observation({ category: 'endpoint', sounds })).why, 'no reply');
  });

  test('a barge-in stops at the clear, or where a held reply ran out; not stopping is wrong', () => {
    const sounds = [{ startMs: 1000, endMs: 1800 }];
    const heard = [{ startMs: 0, endMs: 1350 }];
    const cleared = judge(
      observation({ category: 'bargein', overAgent: true, sounds, heard, clears: [1350] }),
    );
    assert.deepEqual([cleared.correct, cleared.stopMs, cleared.firstWordMs], [true, 350, undefined]);
    const worded = judge(
      observation({
        category: 'bargein',
        overAgent: true,
        sounds,
        heard,
        clears: [1350],
        firstWordAtMs: 1440,
      }),
    );
    assert.equal(worded.firstWordMs, 440, "from the caller's first sound to the STT's first word");
    const held = judge(observation({ category: 'bargein_stop_phrase', overAgent: true, sounds, heard }));
    assert.deepEqual([held.correct, held.stopMs], [true, 350]);
    const talkedOver = judge(
      observation({ category: 'bargein', overAgent: true, sounds, heard: [{ startMs: 0, endMs: 5000 }] }),
    );
    assert.equal(talkedOver.correct, false);
    const late = judge(observation({ category: 'bargein', overAgent: true, sounds, heard, clears: [2500] }));
    assert.equal(late.correct, true, 'the held reply ran out in time');
  });

  test('a backchannel is right only when the agent talks on without a gap over 100 ms', () => {
    const sounds = [{ startMs: 1000, endMs: 1400 }];
    const gapless = [
      { startMs: 0, endMs: 1500 },
      { startMs: 1560, endMs: 5000 },
    ];
    const kept = judge(observation({ category: 'backchannel', overAgent: true, sounds, heard: gapless }));
    assert.deepEqual([kept.correct, kept.gapMs], [true, 60]);
    const holed = [
      { startMs: 0, endMs: 1500 },
      { startMs: 1800, endMs: 5000 },
    ];
    const gap = judge(observation({ category: 'backchannel', overAgent: true, sounds, heard: holed }));
    assert.deepEqual([gap.correct, gap.gapMs, gap.why], [false, 300, 'gap in the agent']);
    const stopped = judge(
      observation({ category: 'noise', overAgent: true, sounds, heard: gapless, clears: [1300] }),
    );
    assert.equal(stopped.why, 'agent stopped');
  });

  test('silence and noise while the agent is quiet are right only if it stays quiet', () => {
    const quiet = judge(
      observation({ category: 'silence', beganMs: 1000, heard: [{ startMs: 0, endMs: 400 }] }),
    );
    assert.equal(quiet.correct, true);
    const spoke = judge(
      observation({ category: 'silence', beganMs: 1000, heard: [{ startMs: 2000, endMs: 2400 }] }),
    );
    assert.equal(spoke.correct, false);
  });

  test('the summary has every category, the percentiles and the worst backchannel gap', () => {
    const summary = summarize([
      { id: 'a', category: 'endpoint', correct: true, why: '', responseLatencyMs: 400 },
      { id: 'b', category: 'endpoint', correct: false, why: '' },
      { id: 'c', category: 'bargein', correct: true, why: '', stopMs: 300, firstWordMs: 450 },
      { id: 'd', category: 'bargein_stop_phrase', correct: false, why: '' },
      { id: 'e', category: 'backchannel', correct: true, why: '', gapMs: 40 },
    ]);
    assert.equal(summary.correct_pct.overall, 60);
    assert.equal(summary.correct_pct.endpoint, 50);
    assert.equal(summary.correct_pct.silence, null);
    assert.equal(summary.response_latency_p50_ms, 400);
    assert.equal(summary.bargein_stop_p95_ms, 300);
    assert.deepEqual([summary.bargein_first_word_p50_ms, summary.bargein_first_word_p95_ms], [450, 450]);
    assert.equal(summary.bargein_not_stopped, 1);
    assert.equal(summary.backchannel_gap_max_ms, 40);
  });
});

describe("the benchmark's scripted STT", () => {
  test('times its messages from the audio it receives: words as they are heard, the final after endpointing', () => {
    const recognizer = new ScriptedRecognizer(
      new URLSearchParams({ endpointing: '200', utterance_end_ms: '1000' }),
    );
    recognizer.expect([
      { text: 'book a table so', voicedMs: 1000 },
      { text: '', voicedMs: 200 },
    ]);
    const at: Array<{ ms: number; message: Record<string, unknown> }> = [];
    let ms = 0;
    const feed = (audio: Int16Array): void => {
      for (let i = 0; i < audio.length; i += 320) {
        ms += 20;
        for (const message of recognizer.audio(audio.subarray(i, i + 320))) at.push({ ms, message });
      }
    };
    feed(silence(500));
    assert.equal(at.length, 0, 'silence says nothing');
    feed(syntheticSpeech(1000));
    feed(silence(1500));
    feed(noise('line', 200, 1));
    feed(silence(400));
    const types = at.map(({ message }) =>
      message['type'] === 'Results' ? (message['is_final'] ? 'final' : 'interim') : String(message['type']),
    );
    assert.equal(types[0], 'SpeechStarted');
    assert.equal(at[0]?.ms, 520);
    const finals = at.filter(({ message }) => message['is_final']);
    assert.equal(finals.length, 2);
    const first = finals[0] as { ms: number; message: Record<string, unknown> };
    // The last syllable fades out by 1430 ms; its loud part ends a little before.
    assert.ok(first.ms >= 1400 + 200 && first.ms <= 1430 + 260, `final at ${first.ms}`);
    assert.equal(first.message['speech_final'], true);
    const interims = at.filter(({ message }) => message['type'] === 'Results' && !message['is_final']);
    assert.ok(interims.length >= 3, 'words come in as they are heard');
    assert.ok((interims[0]?.ms ?? 0) < 1200, 'the first word long before the end');
    assert.ok(types.includes('UtteranceEnd'));
    const noiseFinal = finals[1]?.message as { channel: { alternatives: Array<{ transcript: string }> } };
    assert.equal(noiseFinal.channel.alternatives[0]?.transcript, '', 'noise has no words');
  });

  test('a commit at a pause inside an utterance gives the words heard so far; the rest follow', () => {
    const recognizer = new ScriptedRecognizer(
      new URLSearchParams({ endpointing: '100', utterance_end_ms: '1000' }),
    );
    recognizer.expect([{ text: 'Yes, that works for me.', voicedMs: 1700 }]);
    const finals: string[] = [];
    const feed = (audio: Int16Array): void => {
      for (let i = 0; i < audio.length; i += 320) {
        for (const message of recognizer.audio(audio.subarray(i, i + 320))) {
          const results = message as {
            is_final?: boolean;
            channel?: { alternatives: Array<{ transcript: string }> };
          };
          if (results.is_final) finals.push(results.channel?.alternatives[0]?.transcript ?? '');
        }
      }
    };
    feed(syntheticSpeech(500));
    feed(silence(200));
    feed(syntheticSpeech(1000));
    feed(silence(600));
    assert.equal(finals.length, 2, finals.join(' | '));
    assert.ok(finals[0] !== '' && 'Yes, that works for me.'.startsWith(finals[0]!), finals[0]);
    assert.equal(`${finals[0]} ${finals[1]}`, 'Yes, that works for me.');
  });
});
