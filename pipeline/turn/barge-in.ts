import type { AgentBehavior } from '../../core/agents/types.ts';
import type { InterruptionEvent } from './interruption.ts';
import { findStopPhrase, isBackchannel, normalizeWords } from './lexicon.ts';

/**
 * Words that arrive once the caller has stopped talking over the agent (a batch STT transcribes only then) can
 * still interrupt: the episode may have resumed for lack of words in time. A stop phrase always does; otherwise
 * `min_words` words (at least two, so one stray word does not) unless they are all backchannels and adaptive
 * interruptions are on. A reply that may not be interrupted, or interruptions `off`, never is. Returns the
 * decision to log (episode 0: it belongs to no VAD episode), or null.
 */
export function lateWordsInterruption(
  text: string,
  atMs: number,
  behavior: AgentBehavior,
  interruptible: boolean,
): InterruptionEvent | null {
  if (behavior.interruptions === 'off' || !interruptible) return null;
  const words = normalizeWords(text);
  const stopPhrase = findStopPhrase(words);
  if (!stopPhrase) {
    if (behavior.adaptive_interruptions && isBackchannel(words)) return null;
    if (words.length < Math.max(2, behavior.min_words)) return null;
  }
  return {
    type: 'interrupted',
    reason: stopPhrase ? 'stop_phrase' : 'min_words',
    episode: 0,
    atMs,
    evidence: {
      speechMs: 0,
      words,
      text,
      thresholdMs: null,
      ...(stopPhrase ? { stopPhrase } : {}),
    },
  };
}
