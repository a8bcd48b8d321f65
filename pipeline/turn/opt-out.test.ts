import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isOptOutRequest, optOutGoodbyeLine } from './opt-out.ts';

describe('opt-out requests', () => {
  test('clear requests about every future call, in English, Hinglish and Hindi', () => {
    for (const text of [
      "Please don't call me again.",
      'Do not call me anymore, I am not interested.',
      'Stop calling me.',
      'Can you remove my number from your list?',
      'Take me off your calling list.',
      'Put me on the do not call list',
      "I don't want any more calls from you",
      'Never call this number again!',
      'Dobara call mat karna please',
      'mujhe phone mat karo yaar',
      'Mera number hata do apni list se',
      'mujhe aapki calls nahi chahiye',
      'ye call band karo',
      'मुझे दोबारा कॉल मत करना',
      'कृपया मुझे फोन मत कीजिए',
      'मेरा नंबर हटा दीजिए',
      'मुझे ऐसी कॉल नहीं चाहिए',
      'Abhi busy hoon, aur dobara call mat karna',
    ]) {
      assert.equal(isOptOutRequest(text), true, text);
    }
  });

  test('not requests never to be called: a later time, or other uses of the words', () => {
    for (const text of [
      'Call me later, I am driving.',
      "Don't call me now, call me tomorrow",
      'Abhi call mat karo, shaam ko karna',
      'अभी कॉल मत करो, बाद में करना',
      'Who is calling?',
      'Yes, I wanted to call you about my order',
      'My number is 98765 43210',
      'Stop, I have a question about the delivery',
      'haan ji bataiye',
    ]) {
      assert.equal(isOptOutRequest(text), false, text);
    }
  });

  test('the goodbye is in the voice language, English otherwise', () => {
    assert.match(optOutGoodbyeLine('hi-IN'), /दोबारा/);
    assert.match(optOutGoodbyeLine('en-IN'), /not call you again/);
    assert.match(optOutGoodbyeLine('ta-IN'), /not call you again/);
  });
});
