/**
 * What the agent says when an engine fails during a turn, and when the call gives up. A caller who hears
 * nothing after speaking will repeat themselves or hang up; a short line keeps the conversation going while
 * the engine recovers (a blip, a retry storm, a restarting server).
 */

/** Why a turn failed, for the call log: the stage whose engine failed. */
export type FailureStage = 'stt' | 'llm' | 'tts';

/**
 * Turns in a row that failed before the call ends with `pipeline-error`. Two can still be a blip; the third
 * means the engine is down, and the caller is better served by a hang-up with a clear reason than by more
 * apologies.
 */
export const MAX_CONSECUTIVE_FAILURES = 3;

type Lines = { didNotHear: string; lostThread: string };

/** Short, neutral lines per language (the voice's BCP-47 primary tag); English for the rest. */
const LINES: Readonly<Record<string, Lines>> = {
  en: {
    didNotHear: 'Sorry, I did not catch that. Could you say it again?',
    lostThread: 'Sorry, could you say that again?',
  },
  hi: {
    didNotHear: 'माफ़ कीजिए, मैं सुन नहीं पाई। क्या आप फिर से बोल सकते हैं?',
    lostThread: 'माफ़ कीजिए, क्या आप फिर से बोल सकते हैं?',
  },
};

/** The line for a failed turn: the caller's words were lost (STT), or the reply was (LLM, TTS). */
export function fallbackLine(stage: FailureStage, language: string): string {
  const primary = language.toLowerCase().split('-')[0] ?? 'en';
  const lines = LINES[primary] ?? (LINES.en as Lines);
  return stage === 'stt' ? lines.didNotHear : lines.lostThread;
}

/** Counts failed turns in a row; a turn that completes resets it. */
export class FailureCount {
  private count = 0;

  /** A turn failed; true when the call should end. */
  failed(): boolean {
    this.count++;
    return this.count >= MAX_CONSECUTIVE_FAILURES;
  }

  succeeded(): void {
    this.count = 0;
  }
}
