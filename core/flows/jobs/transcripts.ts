/** Call transcripts as flow jobs read and write them: one `AGENT:` or `CALLER:` turn per line. */

export type Speaker = 'AGENT' | 'CALLER';
export interface Turn {
  speaker: Speaker;
  text: string;
}

const PREFIX = /^\s*(agent|assistant|bot|caller|user|customer)\s*:\s*/i;

function speakerOf(word: string): Speaker {
  return /^(agent|assistant|bot)$/i.test(word) ? 'AGENT' : 'CALLER';
}

/**
 * The turns of a transcript: a line starting with a speaker (`AGENT:`, `CALLER:`; `assistant`, `bot`, `user`
 * and `customer` are read as the same two) starts a turn, other lines continue the turn before; consecutive
 * lines of one speaker are one turn.
 */
export function turnsOf(transcript: string): Turn[] {
  const turns: Turn[] = [];
  for (const raw of transcript.split(/\r?\n/)) {
    const match = PREFIX.exec(raw);
    const text = (match ? raw.slice(match[0].length) : raw).replace(/\s+/g, ' ').trim();
    const last = turns[turns.length - 1];
    if (match) {
      const speaker = speakerOf(match[1] ?? '');
      if (last && last.speaker === speaker) last.text = [last.text, text].filter(Boolean).join(' ');
      else turns.push({ speaker, text });
    } else if (last && text) {
      last.text = [last.text, text].filter(Boolean).join(' ');
    }
  }
  return turns.filter((t) => t.text !== '');
}

export function formatTurns(turns: readonly Turn[]): string {
  return turns.map((t) => `${t.speaker}: ${t.text}`).join('\n');
}

/** The transcript tidied to one turn per line; empty when it has no turn. */
export function tidyTranscript(transcript: string): string {
  return formatTurns(turnsOf(transcript));
}

function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

function distance(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : 1 - shared / union;
}

/**
 * The indexes of `count` transcripts, most different first: the first is the one farthest from all others
 * on average, each next the one farthest from those already picked (by their callers' words).
 */
export function mostDifferentFirst(transcripts: readonly string[], count: number): number[] {
  const sets = transcripts.map((t) =>
    wordsOf(
      turnsOf(t)
        .filter((turn) => turn.speaker === 'CALLER')
        .map((turn) => turn.text)
        .join(' '),
    ),
  );
  const picked: number[] = [];
  const left = new Set(sets.map((_, i) => i));
  while (picked.length < Math.min(count, sets.length)) {
    let best = -1;
    let bestScore = -1;
    for (const i of left) {
      const others = picked.length > 0 ? picked : [...left].filter((j) => j !== i);
      const score =
        others.length === 0
          ? 0
          : Math.min(...others.map((j) => distance(sets[i] as Set<string>, sets[j] as Set<string>)));
      const average =
        picked.length > 0 || others.length === 0
          ? score
          : others.reduce((sum, j) => sum + distance(sets[i] as Set<string>, sets[j] as Set<string>), 0) /
            others.length;
      if (average > bestScore) {
        best = i;
        bestScore = average;
      }
    }
    picked.push(best);
    left.delete(best);
  }
  return picked;
}
