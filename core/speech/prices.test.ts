import assert from 'node:assert/strict';
import { test } from 'node:test';
import { billedAudioSeconds, speechCost, transcriptionCost } from './prices.ts';

test('live audio is billed per started second, the total rounded up to a paisa once', () => {
  assert.equal(billedAudioSeconds(0), 0);
  assert.equal(billedAudioSeconds(1), 1);
  assert.equal(billedAudioSeconds(2000), 2);
  assert.equal(billedAudioSeconds(2001), 3);
  assert.equal(transcriptionCost(0), 0);
  assert.equal(transcriptionCost(1), 1); // 0.5 paise, rounded up once
  assert.equal(transcriptionCost(3), 2); // 1.5 paise
  assert.equal(transcriptionCost(60), 30);
  assert.equal(transcriptionCost(3600), 1800); // ₹18 an hour
});

test('speech is priced per character by voice family, local cheaper than remote', () => {
  assert.equal(speechCost('espeak', 1), 1);
  assert.equal(speechCost('espeak', 1000), 50);
  assert.equal(speechCost('openai', 1000), 150);
  assert.ok(speechCost('espeak', 5000) < speechCost('openai', 5000));
});
