/**
 * A small language model for PocketSphinx from a corpus of sentences: an ARPA bigram model (absolute
 * discounting, backing off to add-one unigrams over the corpus vocabulary) and the pronunciations of its words
 * taken from the CMU dictionary. Pure functions; `build.ts` writes the files the engine loads.
 */

/** Discount taken from every seen bigram and given to the unigram back-off. */
const DISCOUNT = 0.5;

export function corpusSentences(text: string): string[][] {
  return text
    .split('\n')
    .map((line) => line.trim().toLowerCase())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split(/\s+/));
}

function log10(p: number): string {
  return Math.log10(p).toFixed(4);
}

/** The ARPA text of a bigram model over the sentences (each wrapped in <s> ... </s>). */
export function arpaBigramModel(sentences: readonly string[][]): string {
  const unigrams = new Map<string, number>();
  const bigrams = new Map<string, Map<string, number>>();
  let tokens = 0;
  for (const sentence of sentences) {
    const words = ['<s>', ...sentence, '</s>'];
    for (const [i, word] of words.entries()) {
      unigrams.set(word, (unigrams.get(word) ?? 0) + 1);
      // <s> begins every sentence and is never predicted: it takes no probability mass.
      if (i > 0) tokens++;
      if (i === 0) continue;
      const history = words[i - 1]!;
      const followers = bigrams.get(history) ?? new Map<string, number>();
      followers.set(word, (followers.get(word) ?? 0) + 1);
      bigrams.set(history, followers);
    }
  }
  const vocabulary = [...unigrams.keys()].sort();
  const predictable = vocabulary.length - 1;
  const unigramP = new Map(vocabulary.map((w) => [w, ((unigrams.get(w) ?? 0) + 1) / (tokens + predictable)]));
  const unigramLines: string[] = [];
  const bigramLines: string[] = [];
  for (const word of vocabulary) {
    const followers = bigrams.get(word);
    let backoff = 0;
    if (followers) {
      const historyCount = [...followers.values()].reduce((n, c) => n + c, 0);
      let seenUnigramMass = 0;
      for (const [next, count] of [...followers.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        bigramLines.push(`${log10((count - DISCOUNT) / historyCount)} ${word} ${next}`);
        seenUnigramMass += unigramP.get(next)!;
      }
      const freed = (DISCOUNT * followers.size) / historyCount;
      backoff = freed / Math.max(1e-9, 1 - seenUnigramMass);
    }
    // <s> is never predicted: ARPA's convention is a log probability of -99.
    const probability = word === '<s>' ? '-99.0000' : log10(unigramP.get(word)!);
    unigramLines.push(followers ? `${probability} ${word} ${log10(backoff)}` : `${probability} ${word}`);
  }
  return [
    '\\data\\',
    `ngram 1=${unigramLines.length}`,
    `ngram 2=${bigramLines.length}`,
    '',
    '\\1-grams:',
    ...unigramLines,
    '',
    '\\2-grams:',
    ...bigramLines,
    '',
    '\\end\\',
    '',
  ].join('\n');
}

/**
 * The dictionary lines (`word PHONES`, variants as `word(2) PHONES`) of the corpus words, from the CMU
 * dictionary's text. Throws on a word it lacks: the corpus must only use words with a pronunciation.
 */
export function pronunciations(words: Iterable<string>, cmudict: string): string {
  const wanted = new Set(words);
  wanted.delete('<s>');
  wanted.delete('</s>');
  const lines: string[] = [];
  const found = new Set<string>();
  for (const line of cmudict.split('\n')) {
    const head = line.slice(0, line.indexOf(' '));
    const word = head.replace(/\(\d+\)$/, '');
    if (!wanted.has(word)) continue;
    lines.push(line.trim());
    found.add(word);
  }
  const missing = [...wanted].filter((w) => !found.has(w));
  if (missing.length > 0) throw new Error(`no pronunciation for: ${missing.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
