import { transcribesLanguage } from './language.ts';
import type { SpeechToText } from './types.ts';

/**
 * Which languages a node's calls hear with words and which with turn-taking by voice activity only: calls in a
 * language no STT engine serves still run, their caller turns kept as unrecognised speech. Shown at start and
 * in `GET /healthz` (`engines`).
 */
export interface SpeechCoverage {
  /** The STT engine's provider; `none` when no engine runs on this node. */
  stt: string;
  /** Languages whose callers' words are recognised; `["*"]` when every language is. */
  words: string[];
  /** The platform's languages (its voices') whose calls run on turn-taking by voice activity only. */
  turn_taking_only: string[];
}

/** Every language: an engine that lists none transcribes any. */
const EVERY_LANGUAGE = '*';

export function speechCoverage(
  stt: Pick<SpeechToText, 'provider' | 'languages'> | undefined,
  platformLanguages: readonly string[],
): SpeechCoverage {
  if (!stt) return { stt: 'none', words: [], turn_taking_only: [...platformLanguages].sort() };
  const words = stt.languages.length === 0 ? [EVERY_LANGUAGE] : [...stt.languages].sort();
  const turnTakingOnly = platformLanguages.filter(
    (language) => !transcribesLanguage(stt.languages, language),
  );
  return { stt: stt.provider, words, turn_taking_only: [...turnTakingOnly].sort() };
}

/** The coverage in one line, for the start banner and the log. */
export function describeCoverage(coverage: SpeechCoverage): string {
  if (coverage.words.length === 0) {
    return 'Speech to text: no engine installed; every call runs on turn-taking by voice activity (caller turns kept as unrecognised speech).';
  }
  if (coverage.words.includes(EVERY_LANGUAGE))
    return `Speech to text: ${coverage.stt} gives words in every language.`;
  const listed = coverage.turn_taking_only.join(', ');
  const others = listed === '' ? 'every other language' : `${listed} and every other language`;
  return `Speech to text: ${coverage.stt} gives words in ${coverage.words.join(', ')}; ${others} run on turn-taking by voice activity.`;
}
