/**
 * Which languages a node's calls hear with words: an engine that lists languages serves those (any region of
 * their primary language), one that lists none serves every language, no engine serves none. The start banner's
 * line says the same in words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCoverage, speechCoverage } from './coverage.ts';
import { transcribesLanguage } from './language.ts';

const PLATFORM = ['bn-IN', 'en-IN', 'hi-IN', 'ta-IN'];

test('a listed language serves every region of it; an empty list serves all; tags are case-insensitive', () => {
  assert.equal(transcribesLanguage(['en-IN', 'en-US'], 'en-GB'), true);
  assert.equal(transcribesLanguage(['en-IN'], 'EN'), true);
  assert.equal(transcribesLanguage(['en-IN'], 'hi-IN'), false);
  assert.equal(transcribesLanguage([], 'ta-IN'), true);
  assert.equal(transcribesLanguage(['en-IN'], ''), false);
});

test('coverage of an English-only engine, an any-language engine, and none', () => {
  const english = speechCoverage({ provider: 'sphinx', languages: ['en-US', 'en-IN'] }, PLATFORM);
  assert.deepEqual(english, {
    stt: 'sphinx',
    words: ['en-IN', 'en-US'],
    turn_taking_only: ['bn-IN', 'hi-IN', 'ta-IN'],
  });
  assert.equal(
    describeCoverage(english),
    'Speech to text: sphinx gives words in en-IN, en-US; bn-IN, hi-IN, ta-IN and every other language run on turn-taking by voice activity.',
  );
  const any = speechCoverage({ provider: 'deepgram', languages: [] }, PLATFORM);
  assert.deepEqual(any, { stt: 'deepgram', words: ['*'], turn_taking_only: [] });
  assert.equal(describeCoverage(any), 'Speech to text: deepgram gives words in every language.');
  const none = speechCoverage(undefined, PLATFORM);
  assert.deepEqual(none, { stt: 'none', words: [], turn_taking_only: PLATFORM });
  assert.match(
    describeCoverage(none),
    /no engine installed; every call runs on turn-taking by voice activity/,
  );
});
