import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SPHINX_DEFAULTS } from '../providers/sphinx.ts';
import { arpaBigramModel, corpusSentences, pronunciations } from './language-model.ts';

/** The ARPA sections as maps: unigram -> [log10 p, log10 backoff], "w1 w2" -> log10 p. */
function parse(arpa: string): { unigrams: Map<string, [number, number]>; bigrams: Map<string, number> } {
  const unigrams = new Map<string, [number, number]>();
  const bigrams = new Map<string, number>();
  let section = '';
  for (const line of arpa.split('\n')) {
    if (line.startsWith('\\')) section = line;
    else if (line.trim() === '' || line.startsWith('ngram')) continue;
    else if (section === '\\1-grams:') {
      const [p, word, backoff] = line.split(' ');
      unigrams.set(word!, [Number(p), Number(backoff ?? 0)]);
    } else if (section === '\\2-grams:') {
      const [p, w1, w2] = line.split(' ');
      bigrams.set(`${w1} ${w2}`, Number(p));
    }
  }
  return { unigrams, bigrams };
}

describe('agent-call language model', () => {
  const sentences = corpusSentences('# a comment\nyes please\nno thanks\n\nyes that is right\n');

  test('the corpus is lines of lower-case words; comments and blank lines are skipped', () => {
    assert.deepEqual(sentences, [
      ['yes', 'please'],
      ['no', 'thanks'],
      ['yes', 'that', 'is', 'right'],
    ]);
  });

  test('every history predicts a proper distribution: seen bigrams plus its back-off to unigrams', () => {
    const { unigrams, bigrams } = parse(arpaBigramModel(sentences));
    assert.equal(unigrams.get('<s>')![0], -99);
    const predictable = [...unigrams.keys()].filter((w) => w !== '<s>');
    for (const [history, [, backoff]] of unigrams) {
      if (history === '</s>') continue;
      let total = 0;
      for (const next of predictable) {
        const seen = bigrams.get(`${history} ${next}`);
        total += seen === undefined ? 10 ** backoff * 10 ** unigrams.get(next)![0] : 10 ** seen;
      }
      assert.ok(Math.abs(total - 1) < 0.01, `P(. | ${history}) sums to ${total}`);
    }
  });

  test('pronunciations come from the CMU dictionary, variants included; a missing word is an error', () => {
    const cmudict = 'no N OW\nthanks TH AE NG K S\nyes Y EH S\nyes(2) Y AE S\n';
    assert.equal(
      pronunciations(['<s>', 'yes', 'no', '</s>'], cmudict),
      'no N OW\nyes Y EH S\nyes(2) Y AE S\n',
    );
    assert.throws(() => pronunciations(['yes', 'lakh'], cmudict), /no pronunciation for: lakh/);
  });

  const here = path.dirname(fileURLToPath(import.meta.url));
  const cmudictPath = path.join(SPHINX_DEFAULTS.modelDir, 'cmudict-en-us.dict');
  test('the committed model and dictionary are what the corpus builds (run build.ts after editing it)', {
    skip: !existsSync(cmudictPath) && 'pocketsphinx-en-us is not installed',
  }, () => {
    const corpus = corpusSentences(readFileSync(path.join(here, 'agent-calls.txt'), 'utf8'));
    const cmudict = readFileSync(cmudictPath, 'utf8');
    assert.equal(readFileSync(path.join(here, 'agent-calls.lm'), 'utf8'), arpaBigramModel(corpus));
    assert.equal(
      readFileSync(path.join(here, 'agent-calls.dict'), 'utf8'),
      pronunciations(corpus.flat(), cmudict),
    );
  });
});
