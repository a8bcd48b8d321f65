/**
 * Sentence splitter: examples in English, Hindi, Hinglish and Gujarati (decimals, abbreviations, URLs, emails,
 * dandas, list numbers, long clauses), and properties over generated text: the chunks do not depend on how the
 * text was cut into deltas, no character is lost, every chunk is trimmed, non-empty and within `maxChars`, and
 * no decimal number is ever split.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  packSentences,
  SentenceSplitter,
  type SentenceSplitterOptions,
  splitSentences,
} from './sentences.ts';

function streamed(deltas: string[], options?: SentenceSplitterOptions): string[] {
  const splitter = new SentenceSplitter(options);
  return [...deltas.flatMap((delta) => splitter.push(delta)), ...splitter.flush()];
}

const EXAMPLES: [name: string, text: string, chunks: string[]][] = [
  [
    'English sentences',
    'Hello there! How are you? I am fine.',
    ['Hello there!', 'How are you?', 'I am fine.'],
  ],
  [
    'decimals and abbreviations',
    'The price is Rs. 3.5 lakh. Dr. Sharma and Mr. Rao will call at 5 p.m. today.',
    ['The price is Rs. 3.5 lakh.', 'Dr. Sharma and Mr. Rao will call at 5 p.m. today.'],
  ],
  [
    'URLs and emails',
    'Visit https://shop.example.com/a.b?c=1.5 or write to help.desk@example.co.in. Thanks!',
    ['Visit https://shop.example.com/a.b?c=1.5 or write to help.desk@example.co.in.', 'Thanks!'],
  ],
  [
    'Hindi danda and double danda',
    'नमस्ते! आपका ऑर्डर कल पहुँच जाएगा। डॉ. शर्मा ₹3.5 लाख लेंगे॥ धन्यवाद',
    ['नमस्ते!', 'आपका ऑर्डर कल पहुँच जाएगा।', 'डॉ. शर्मा ₹3.5 लाख लेंगे॥', 'धन्यवाद'],
  ],
  [
    'Hinglish',
    'Aapka order kal deliver ho jayega. Kya aur kuch chahiye? Theek hai, dhanyavaad!',
    ['Aapka order kal deliver ho jayega.', 'Kya aur kuch chahiye?', 'Theek hai, dhanyavaad!'],
  ],
  [
    'Gujarati',
    'તમારો ઓર્ડર કાલે પહોંચશે. કિંમત રૂ. 2.5 હજાર છે. બીજું કંઈ?',
    ['તમારો ઓર્ડર કાલે પહોંચશે.', 'કિંમત રૂ. 2.5 હજાર છે.', 'બીજું કંઈ?'],
  ],
  ['newlines and list numbers', '1. Buy milk\n2. Buy eggs\n\nDone', ['1. Buy milk', '2. Buy eggs', 'Done']],
  [
    '"No." as an answer, "No." before a number',
    'No. I cannot. Please call No. 5 instead.',
    ['No.', 'I cannot.', 'Please call No. 5 instead.'],
  ],
  [
    'quotes and brackets stay with their sentence',
    'She said "Really?" Then (yes.) okay… Fine.',
    ['She said "Really?"', 'Then (yes.)', 'okay…', 'Fine.'],
  ],
  [
    'initials and e.g.',
    'A. P. J. Abdul Kalam, e.g. a scientist.',
    ['A. P. J. Abdul Kalam, e.g. a scientist.'],
  ],
];

describe('SentenceSplitter examples', () => {
  for (const [name, text, chunks] of EXAMPLES) {
    test(name, () => {
      assert.deepEqual(splitSentences(text), chunks);
      assert.deepEqual(streamed(Array.from(text)), chunks, 'one character at a time');
    });
  }

  test('a long first clause is flushed at a comma, later ones only when longer', () => {
    const text =
      'So I was thinking that we could meet next week, maybe on Tuesday, if that suits you, or else on Wednesday.';
    assert.deepEqual(splitSentences(text), [
      'So I was thinking that we could meet next week,',
      'maybe on Tuesday, if that suits you, or else on Wednesday.',
    ]);
    assert.deepEqual(splitSentences(text, { clauseMinChars: 0, firstClauseMinChars: 0 }), [text]);
  });

  test('a comma inside a number is not a clause end', () => {
    assert.deepEqual(
      splitSentences('Your balance is Rs. 1,25,000 and your due date is the fifth of March.', {
        firstClauseMinChars: 5,
      }),
      ['Your balance is Rs. 1,25,000 and your due date is the fifth of March.'],
    );
  });

  test('a comma right after a word ends the clause without waiting for the next delta', () => {
    const splitter = new SentenceSplitter({ firstClauseMinChars: 3 });
    assert.deepEqual(splitter.push('Sure,'), ['Sure,']);
    assert.deepEqual(splitter.push(' I can'), []);
    assert.deepEqual(splitter.flush(), ['I can']);
    const hindi = new SentenceSplitter({ firstClauseMinChars: 3 });
    assert.deepEqual(hindi.push('हाँ,'), ['हाँ,'], 'a vowel sign ends a word too');
    // After a digit, the comma may be a number's: it waits for the next character.
    const number = new SentenceSplitter({ firstClauseMinChars: 3 });
    assert.deepEqual(number.push('Rs 1,'), []);
    assert.deepEqual(number.push('25,000 only'), []);
    assert.deepEqual(number.flush(), ['Rs 1,25,000 only']);
  });

  test('text without boundaries is cut at the last space before maxChars', () => {
    const chunks = splitSentences('aaaa bbbb cccc dddd eeee', { maxChars: 12 });
    assert.deepEqual(chunks, ['aaaa bbbb', 'cccc dddd', 'eeee']);
  });

  test('a sentence end waits for the next character before it is emitted', () => {
    const splitter = new SentenceSplitter();
    assert.deepEqual(splitter.push('It costs 3.'), []);
    assert.deepEqual(splitter.push('5 lakh. Next'), ['It costs 3.5 lakh.']);
    assert.deepEqual(splitter.flush(), ['Next']);
    assert.deepEqual(splitter.flush(), [], 'flush resets');
  });

  test('packSentences keeps whole sentences within the limit', () => {
    const sentence = 'This is one short sentence, spoken aloud!!';
    const text = Array.from({ length: 10 }, () => sentence).join(' ');
    const pieces = packSentences(text, 100);
    assert.ok(pieces.every((p) => p.length <= 100 && p.endsWith('!!')));
    assert.equal(pieces.join(' '), text);
  });
});

// biome-ignore format: a word list reads better packed
const WORDS = [
  'hello', 'Dr.', 'Rs.', 'Mr.', '3.5', '1,000', 'e.g.', 'U.S.', 'https://a.example.com/x.y?z=1', 'me@mail.co.in',
  'नमस्ते', 'आपका', 'ऑर्डर', 'डॉ.', 'તમારો', 'ઓર્ડર', 'kal', 'theek', 'No.', '42', 'A.', 'I',
];
const MARKS = ['', '', '', '.', '?', '!', ',', ';', '।', '॥', '…', '."', '?)', '\n'];

const textArbitrary = fc
  .array(
    fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...MARKS), fc.constantFrom(' ', ' ', '  ', '\n', '')),
    {
      maxLength: 60,
    },
  )
  .map((parts) => parts.map(([word, mark, space]) => word + mark + space).join(''));

/** Cuts a text into deltas at the given fractions of its length. */
function cut(text: string, fractions: number[]): string[] {
  const points = [...new Set(fractions.map((f) => Math.floor(f * text.length)))].sort((a, b) => a - b);
  const deltas: string[] = [];
  let last = 0;
  for (const point of [...points, text.length]) {
    deltas.push(text.slice(last, point));
    last = point;
  }
  return deltas;
}

const optionsArbitrary = fc.record({
  clauseMinChars: fc.integer({ min: 0, max: 80 }),
  firstClauseMinChars: fc.integer({ min: 0, max: 40 }),
  maxChars: fc.integer({ min: 8, max: 300 }),
});

describe('SentenceSplitter properties', () => {
  test('the chunks do not depend on how the text is cut into deltas', () => {
    fc.assert(
      fc.property(
        textArbitrary,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true })),
        optionsArbitrary,
        (text, fractions, options) => {
          assert.deepEqual(streamed(cut(text, fractions), options), splitSentences(text, options));
        },
      ),
      { numRuns: 500 },
    );
  });

  test('no character is lost; chunks are trimmed, non-empty and within maxChars', () => {
    fc.assert(
      fc.property(textArbitrary, optionsArbitrary, (text, options) => {
        const chunks = splitSentences(text, options);
        assert.equal(chunks.join('').replace(/\s+/g, ''), text.replace(/\s+/g, ''));
        for (const chunk of chunks) {
          assert.ok(
            chunk.length > 0 && chunk.length <= options.maxChars,
            `bad length: ${JSON.stringify(chunk)}`,
          );
          assert.equal(chunk, chunk.trim());
        }
      }),
      { numRuns: 500 },
    );
  });

  test('a decimal number is never split', () => {
    fc.assert(
      fc.property(textArbitrary, (text) => {
        const decimals = (s: string) => s.match(/(?=\d\.\d)/g)?.length ?? 0;
        const chunks = splitSentences(text);
        assert.equal(
          decimals(chunks.join(' ')),
          decimals(text),
          `split inside a decimal: ${JSON.stringify(chunks)}`,
        );
      }),
      { numRuns: 500 },
    );
  });
});
