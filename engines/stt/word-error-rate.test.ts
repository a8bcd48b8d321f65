import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizedWords, wordEdits, wordErrorRate } from './testing/word-error-rate.ts';

describe('word error rate', () => {
  test('words are compared without case or punctuation', () => {
    assert.deepEqual(normalizedWords('Yes, speaking.'), ['yes', 'speaking']);
    assert.deepEqual(normalizedWords("I'd like Tuesday's slot!"), ["i'd", 'like', "tuesday's", 'slot']);
    assert.equal(wordEdits('yes speaking', 'Yes, speaking.'), 0);
  });

  test('substitutions, deletions and insertions each count one edit', () => {
    assert.equal(wordEdits('yeah speaking', 'yes speaking'), 1);
    assert.equal(wordEdits('speaking', 'yes speaking'), 1);
    assert.equal(wordEdits('yes yes speaking now', 'yes speaking'), 2);
    assert.equal(wordEdits('yeah you do', 'yes speaking'), 3);
    assert.equal(wordEdits('', 'one two three'), 3);
    assert.equal(wordEdits('one two three', ''), 3);
  });

  test('the rate is all edits over all reference words', () => {
    const rate = wordErrorRate([
      { hypothesis: 'yes speaking', reference: 'Yes, speaking.' },
      { hypothesis: 'okay thank you good bye', reference: 'Okay, thank you. Goodbye.' },
    ]);
    // "goodbye" heard as "good bye": one substitution and one insertion, over 6 words.
    assert.equal(rate, 2 / 6);
    assert.equal(wordErrorRate([]), 0);
    assert.equal(wordErrorRate([{ hypothesis: 'noise', reference: '' }]), 1);
  });
});
