/**
 * Retrieval over a knowledge base too large for the prompt: its texts cut into passages, ranked for a question by
 * BM25 (Okapi, k1 1.2, b 0.75) over lower-cased words of three letters or more (a plural `s` dropped), common
 * English and Hinglish function words left out. Deterministic: equal scores keep the passages' own order.
 */

/** Passages are paragraphs of at most this many characters (a longer paragraph is cut at a sentence or word). */
export const PASSAGE_CHARS = 600;

/** What one caller turn is given: the best passages, at most this many and this many characters in all. */
export const TURN_RETRIEVAL = { passages: 4, chars: 2_000 } as const;

const BM25 = { k1: 1.2, b: 0.75 } as const;

const WORD = /[\p{L}\p{N}]{3,}/gu;

/** Words that say nothing of what a passage is about (English, and Hinglish as callers speak it). */
const STOPWORDS = new Set(
  (
    'the and for are but not you your yours our ours with this that these those from have has had was were ' +
    'will would can could should shall may might what when where which who whom whose why how about into ' +
    'onto than then them they their there here its it’s also just like want wanted need needs get got ' +
    'any all some one two his her hers him she him yes okay thank thanks please hello very much more most ' +
    'hai hain kya nahi nahin haan aur bhi toh koi kuch mein main mera meri mere aap aapka aapki hum ' +
    'tha thi the kar karo karna raha rahi ' +
    'ask asked tell know'
  ).split(/\s+/),
);

/**
 * The words of a text that count for retrieval, in order (repeats kept), a plural `s` dropped so that "refunds"
 * finds "refund".
 */
export function termsOf(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? [])
    .filter((w) => !STOPWORDS.has(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** A text cut into passages: paragraphs, each at most `max` characters, cut after a sentence or a word. */
export function splitPassages(text: string, max = PASSAGE_CHARS): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n+/)) {
    let rest = paragraph.replace(/\s+/g, ' ').trim();
    while (rest.length > max) {
      const window = rest.slice(0, max + 1);
      const sentence = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
      const space = window.lastIndexOf(' ');
      const cut = sentence > max / 2 ? sentence + 1 : space > max / 2 ? space : max;
      out.push(rest.slice(0, cut).trim());
      rest = rest.slice(cut).trim();
    }
    if (rest) out.push(rest);
  }
  return out;
}

interface Indexed {
  order: number;
  text: string;
  length: number;
  counts: Map<string, number>;
}

/** Passages indexed for BM25; `search` answers the best of them for a question. */
export class PassageIndex {
  private readonly passages: Indexed[];
  private readonly frequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(passages: readonly string[]) {
    this.passages = passages.map((text, order) => {
      const terms = termsOf(text);
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const term of counts.keys()) this.frequency.set(term, (this.frequency.get(term) ?? 0) + 1);
      return { order, text, length: terms.length, counts };
    });
    const total = this.passages.reduce((sum, p) => sum + p.length, 0);
    this.averageLength = this.passages.length > 0 ? Math.max(1, total / this.passages.length) : 1;
  }

  get size(): number {
    return this.passages.length;
  }

  /** The BM25 score of each passage for `query`, in the passages' order. */
  scores(query: string): number[] {
    const wanted = [...new Set(termsOf(query))];
    const n = this.passages.length;
    return this.passages.map((p) => {
      let score = 0;
      for (const term of wanted) {
        const tf = p.counts.get(term) ?? 0;
        if (tf === 0) continue;
        const df = this.frequency.get(term) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score +=
          (idf * tf * (BM25.k1 + 1)) /
          (tf + BM25.k1 * (1 - BM25.b + (BM25.b * p.length) / this.averageLength));
      }
      return score;
    });
  }

  /**
   * The passages that share words with `query`, best first (ties in the passages' order), at most `max` of them
   * and `budgetChars` characters in all (a passage that does not fit is passed over for a shorter one).
   */
  search(query: string, max: number, budgetChars: number): string[] {
    const scores = this.scores(query);
    const ranked = this.passages
      .map((p, i) => ({ p, score: scores[i] ?? 0 }))
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score || a.p.order - b.p.order);
    const chosen: string[] = [];
    let used = 0;
    for (const { p } of ranked) {
      if (chosen.length >= max) break;
      if (used + p.text.length + 1 > budgetChars) continue;
      chosen.push(p.text);
      used += p.text.length + 1;
    }
    return chosen;
  }
}
