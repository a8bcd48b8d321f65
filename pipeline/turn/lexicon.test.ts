/**
 * The turn-taking lexicon across scripts and spellings: romanized and native Hindi/Gujarati words meet, and
 * backchannels, stop phrases, trailing conjunctions and sentence ends are recognised.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  endsSentence,
  findStopPhrase,
  isBackchannel,
  normalizeWords,
  trailingContinuation,
} from './lexicon.ts';

describe('lexicon', () => {
  const normalized: Array<[string, string[]]> = [
    ['Haan ji!', ['haan', 'ji']],
    ['हाँ जी', ['haan', 'ji']],
    ['हां जी', ['haan', 'ji']],
    ['ठीक है।', ['theek', 'hai']],
    ['હા, બરાબર છે', ['ha', 'barabar', 'che']],
    ['Mm-hmm', ['mm', 'hmm']],
    ['don’t stop', ["don't", 'stop']],
    ['  ', []],
    ['मैं दिल्ली से हूँ', ['मैं', 'दिल्ली', 'se', 'हूं']],
  ];
  for (const [text, words] of normalized) {
    test(`normalizeWords(${JSON.stringify(text)})`, () => assert.deepEqual(normalizeWords(text), words));
  }

  const backchannels: Array<[string, boolean]> = [
    ['ok', true],
    ['Okkk.', true],
    ['okay okay', true],
    ['uh-huh', true],
    ['Hmmmm', true],
    ['yeah right', true],
    ['haaan', true],
    ['accha', true],
    ['achha ji theek hai', true],
    ['thik hai', true],
    ['हाँ जी, ठीक है', true],
    ['હા', true],
    ['સારું છે', true],
    ['barabar', true],
    ['sahi hai', true],
    ['haan but', false],
    ['hai', false],
    ['हम', false],
    ['', false],
    ['no', false],
    ['what', false],
  ];
  for (const [text, expected] of backchannels) {
    test(`isBackchannel(${JSON.stringify(text)}) is ${expected}`, () => {
      assert.equal(isBackchannel(normalizeWords(text)), expected);
    });
  }

  const stops: Array<[string, string | null]> = [
    ['stop', 'stop'],
    ['wait wait', 'wait'],
    ['please hold on', 'hold on'],
    ['No, that is wrong', 'no'],
    ['रुको', 'ruko'],
    ['ruk jao', 'ruk'],
    ['nahin', 'nahin'],
    ['नहीं', 'nahin'],
    ['suniye', 'suniye'],
    ['एक मिनट', 'ek minute'],
    ['band karo', 'band karo'],
    ['ના', 'no'],
    ['રોકો', 'roko'],
    ['I know', null],
    ['haan ji', null],
    ['ek baat', null],
  ];
  for (const [text, phrase] of stops) {
    test(`findStopPhrase(${JSON.stringify(text)}) is ${phrase}`, () => {
      assert.equal(findStopPhrase(normalizeWords(text)), phrase);
    });
  }

  const continuations: Array<[string, string | null]> = [
    ['I need two tickets and', 'and'],
    ['mujhe chahiye aur', 'aur'],
    ['मुझे चाहिए और', 'aur'],
    ['matlab', 'matlab'],
    ['so umm', 'umm'],
    ['I want to', 'to'],
    ['me too', null],
    ['Two tickets please.', null],
    ['', null],
  ];
  for (const [text, word] of continuations) {
    test(`trailingContinuation(${JSON.stringify(text)}) is ${word}`, () => {
      assert.equal(trailingContinuation(normalizeWords(text)), word);
    });
  }

  test('endsSentence', () => {
    for (const yes of ['Done.', 'Really?', 'Yes!', 'ठीक है।', 'ठीक है॥', '"Yes."', 'Yes.  '])
      assert.ok(endsSentence(yes), yes);
    for (const no of ['and', 'so...', 'well…', '', 'hello,']) assert.ok(!endsSentence(no), no);
  });
});
