/**
 * Word error rate: the word-level Levenshtein distance (substitutions + deletions + insertions) between what
 * was heard and what was said, over the number of words said. Words are compared normalised: lower case,
 * letters, digits and apostrophes only ("Yes, speaking." is `yes speaking`). One scoring function for every
 * decoder compared (bench/stt.ts).
 */

export function normalizedWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** Edits turning the reference words into the hypothesis words. */
export function wordEdits(hypothesis: string, reference: string): number {
  const heard = normalizedWords(hypothesis);
  const said = normalizedWords(reference);
  // One row of the edit-distance table at a time: row[j] = distance between said[0..i) and heard[0..j).
  let previous = Array.from({ length: heard.length + 1 }, (_, j) => j);
  for (let i = 1; i <= said.length; i++) {
    const row = [i];
    for (let j = 1; j <= heard.length; j++) {
      const substitution = previous[j - 1]! + (said[i - 1] === heard[j - 1] ? 0 : 1);
      row.push(Math.min(substitution, previous[j]! + 1, row[j - 1]! + 1));
    }
    previous = row;
  }
  return previous[heard.length]!;
}

/**
 * The word error rate of a set of utterances: all their edits over all their reference words (so long
 * utterances weigh more than short ones). 0 is perfect; it can exceed 1 when much more is heard than was said.
 */
export function wordErrorRate(pairs: readonly { hypothesis: string; reference: string }[]): number {
  let edits = 0;
  let words = 0;
  for (const { hypothesis, reference } of pairs) {
    edits += wordEdits(hypothesis, reference);
    words += normalizedWords(reference).length;
  }
  if (words === 0) return edits === 0 ? 0 : 1;
  return edits / words;
}
