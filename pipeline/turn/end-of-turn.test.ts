/**
 * The turn-end policy, as a table: the text a caller's turn ends with, per language, and the silence after
 * their speech that ends it (endpointing_ms 500).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTINUATION_MIN_MS, estimateEndOfTurn, holdMs, requiredSilence } from './end-of-turn.ts';

const ENDPOINTING_MS = 500;

const table: Array<[text: string, silenceMs: number, cue: string]> = [
  // English: connectives, fillers, incomplete clauses wait longer
  ['I would like to book a table for two so', 1300, 'continuation'],
  ['I need two tickets and', 1300, 'continuation'],
  ['I was calling because', 1300, 'continuation'],
  ['My order is, umm', 1300, 'continuation'],
  ['I want to', 1300, 'continuation'],
  ['I would like to book a table for', 1300, 'incomplete_clause'],
  ['Can you send it to my', 1300, 'incomplete_clause'],
  ['So...', 1300, 'continuation'],
  ['Well…', 1300, 'trailing_off'],
  // A conjunction wins over the STT's full stop
  ['Two tickets and.', 1300, 'continuation'],
  // Hindi and Hinglish, romanized and in Devanagari
  ['mujhe do logon ke liye table chahiye aur', 1300, 'continuation'],
  ['मुझे कल की टिकट चाहिए और', 1300, 'continuation'],
  ['booking karni hai matlab', 1300, 'continuation'],
  ['main aath baje tak aaunga lekin', 1300, 'continuation'],
  ['mujhe shaam ko', 1300, 'incomplete_clause'],
  ['मैं दिल्ली से', 1300, 'incomplete_clause'],
  // Gujarati lists and clauses
  ['મારે બે ટિકિટ જોઈએ છે અને', 1300, 'continuation'],
  ['mare be ticket joie che ane', 1300, 'continuation'],
  ['hu Surat ma', 1300, 'incomplete_clause'],
  // No cue: endpointing_ms as set
  ['I would like to book a table', 500, 'none'],
  ['mujhe do ticket chahiye', 500, 'none'],
  // Finished: sooner
  ['I would like to book a table for two.', 200, 'sentence_end'],
  ['Can you help me?', 200, 'sentence_end'],
  ['मुझे कल की टिकट चाहिए।', 200, 'sentence_end'],
  ['me too.', 200, 'sentence_end'],
  ['yes it is', 500, 'none'],
  ['ok thank you', 200, 'closing'],
  ['bas itna hi', 200, 'closing'],
  ['धन्यवाद', 200, 'closing'],
  ['આવજો', 200, 'closing'],
];

describe('turn-end policy', () => {
  for (const [text, silenceMs, cue] of table) {
    test(`${JSON.stringify(text)}: ${silenceMs} ms (${cue})`, () => {
      const required = requiredSilence(text, ENDPOINTING_MS);
      assert.equal(required.estimate.cue, cue);
      assert.equal(required.ms, silenceMs);
    });
  }

  test('the score orders the cues: going on < no cue < finished', () => {
    const score = (text: string) => estimateEndOfTurn(text).score;
    assert.ok(score('a table for two so') < score('a table for') || score('a table for two so') < 0.35);
    assert.ok(score('a table for') < score('a table for two'));
    assert.ok(score('a table for two') < score('a table for two.'));
    assert.ok(score('a table for two.') < score('thank you'));
  });

  test('the longer wait is bounded: at least CONTINUATION_MIN_MS, else 1.6x endpointing_ms', () => {
    assert.equal(holdMs(200), CONTINUATION_MIN_MS);
    assert.equal(holdMs(500), 1300);
    assert.equal(holdMs(1000), 1600);
    assert.equal(requiredSilence('and', 1000).ms, 1600);
  });

  test('a finished sentence ends sooner than endpointing_ms, whatever it is set to', () => {
    for (const ms of [200, 500, 800]) assert.ok(requiredSilence('Thank you.', ms).ms < ms);
  });

  test('"wala", "wali", "wale" end whole answers ("kal wali", "blue wala"), unlike the postpositions', () => {
    assert.equal(estimateEndOfTurn('Booking cancel karni hai matlab kal wali.').cue, 'sentence_end');
    assert.equal(estimateEndOfTurn('blue wala').cue, 'none');
    assert.equal(estimateEndOfTurn('शाम को').cue, 'incomplete_clause');
  });

  test("an STT's commit makes words with no cue finished, and holds open words that call for more", () => {
    assert.equal(requiredSilence('yes please', 500).wait, 'normal');
    assert.equal(requiredSilence('yes please', 500, true).wait, 'finished');
    assert.equal(requiredSilence('a table for two so', 500, true).wait, 'hold');
    assert.equal(requiredSilence('mujhe table chahiye aur', 500, true).wait, 'hold');
  });
});
