import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAssistantBody, documentFromInput } from './assistant.ts';
import { pdfText } from './documents.ts';
import { KNOWLEDGE_PER_TURN_NOTE, knowledgePassages, knowledgeSection } from './mapping.ts';
import { PassageIndex, splitPassages, termsOf } from './retrieval.ts';
import { minimalPdf } from './testing/pdf.ts';

describe('knowledge-base passages', () => {
  test('paragraphs become passages; a long one is cut after a sentence, never inside a word', () => {
    const long = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} says something useful.`).join(
      ' ',
    );
    const passages = splitPassages(`Short one.\n\n${long}\nLast.`, 200);
    assert.equal(passages[0], 'Short one.');
    assert.equal(passages.at(-1), 'Last.');
    const cut = passages.slice(1, -1);
    assert.ok(cut.length >= 6);
    for (const p of cut) {
      assert.ok(p.length <= 200, p);
      assert.ok(p.endsWith('.'), `cut after a sentence: ${p}`);
    }
    assert.equal(cut.join(' '), long, 'nothing lost or repeated');
    const noSpaces = 'x'.repeat(450);
    assert.deepEqual(
      splitPassages(noSpaces, 200).map((p) => p.length),
      [200, 200, 50],
    );
  });

  test('terms: lower case, three letters or more, function words left out', () => {
    assert.deepEqual(termsOf('I wanted to ask about my ORDER, kya refund milega?'), [
      'order',
      'refund',
      'milega',
    ]);
    assert.deepEqual(termsOf('Orders, refunds; glass'), ['order', 'refund', 'glass']);
  });

  test('BM25 ranks the passage with the rare words first; ties keep their order; nothing for no shared word', () => {
    const index = new PassageIndex([
      'Our warehouse packs every order with care.',
      'Refunds reach the original payment method within 5 working days of the return pickup.',
      'Every order ships from the warehouse in Pune.',
      'Cash on delivery orders pay a fee of 49 rupees.',
    ]);
    assert.deepEqual(index.search('when will my refund come', 4, 10_000), [
      'Refunds reach the original payment method within 5 working days of the return pickup.',
    ]);
    const scores = index.scores('warehouse order');
    assert.ok((scores[0] ?? 0) > 0 && (scores[2] ?? 0) > 0);
    assert.equal(scores[1], 0);
    // Short passages with the same words outrank a long one (length normalisation); at most `max` passages.
    assert.deepEqual(index.search('order warehouse', 1, 10_000), [
      'Our warehouse packs every order with care.',
    ]);
    assert.deepEqual(index.search('weather in Delhi', 4, 10_000), []);
    // The budget passes over a passage that does not fit for one that does.
    assert.deepEqual(index.search('order fee warehouse', 4, 45), [
      'Our warehouse packs every order with care.',
    ]);
  });

  test('the prompt holds the whole knowledge base when it fits, else the FAQs and a note', () => {
    const doc = documentFromInput(
      createAssistantBody.parse({
        name: 'Shop',
        variant: { type: 'order_confirmation', config: {} },
        knowledgeBase: {
          documents: [
            { url: 'https://shop.example/policy.txt', title: 'Policy', type: 'txt' },
            { url: 'https://shop.example/missing.pdf', title: 'Missing', type: 'pdf' },
          ],
          faq: [{ question: 'Do you ship to Pune?', answer: 'Yes, in 3 days.' }],
        },
      }),
    );
    const texts = [
      {
        url: 'https://shop.example/policy.txt',
        title: 'Policy',
        text: 'Returns within 7 days.\nRefunds in 5 days.',
      },
    ];
    assert.deepEqual(knowledgePassages(doc, texts), [
      'Q: Do you ship to Pune?\nA: Yes, in 3 days.',
      '[Policy] Returns within 7 days.',
      '[Policy] Refunds in 5 days.',
      'Reference document: Missing (https://shop.example/missing.pdf)',
    ]);
    const whole = knowledgeSection(doc, 10_000, texts);
    assert.ok(whole.includes('[Policy] Refunds in 5 days.'));
    assert.ok(!whole.includes(KNOWLEDGE_PER_TURN_NOTE));
    const longer = [{ ...texts[0]!, text: `${texts[0]!.text}\n${'Packing rules. '.repeat(40)}` }];
    assert.ok(knowledgeSection(doc, 10_000, longer).length > 600);
    const tight = knowledgeSection(doc, 600, longer);
    assert.ok(tight.length <= 600);
    assert.ok(tight.includes('Q: Do you ship to Pune?'));
    assert.ok(!tight.includes('[Policy]'), 'document passages are retrieved per turn instead');
    assert.ok(tight.endsWith(KNOWLEDGE_PER_TURN_NOTE));
    assert.equal(knowledgeSection(doc, 20, texts), '', 'no room at all');
  });
});

describe('PDF text', () => {
  test("a PDF's text lines come out as lines; a file that is not a PDF is a 400", async () => {
    const text = await pdfText(
      minimalPdf(['Returns are accepted within 7 days (unused items).', 'Refunds reach UPI in 3 days.']),
    );
    assert.equal(text, 'Returns are accepted within 7 days (unused items).\nRefunds reach UPI in 3 days.');
    await assert.rejects(pdfText(Buffer.from('just text')), /not a PDF/);
    await assert.rejects(pdfText(Buffer.from('%PDF-1.4\nbroken')), /could not be read/);
  });
});
