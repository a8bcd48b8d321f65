/** The conversation as spoken: one entry per turn, in call time (ms from the start of media). */
export interface TranscriptTurn {
  speaker: 'agent' | 'caller';
  text: string;
  startMs: number;
  endMs: number;
  /** The agent was cut off; `text` is what the caller heard. */
  interrupted: boolean;
  /**
   * Caller turns: whether words were recognised. False: the caller spoke (voice activity from `startMs` to
   * `endMs`) but no speech-to-text gave words for it, and `text` is empty.
   */
  recognized?: boolean;
  /** The flow node the agent spoke from, for node-based agents. */
  node?: string;
}

/** Collects turns; bounded so a runaway call cannot grow it without limit. */
export class Transcript {
  static readonly MAX_TURNS = 2000;
  private readonly entries: TranscriptTurn[] = [];

  add(turn: TranscriptTurn): void {
    const text = turn.text.trim();
    const unrecognizedSpeech = turn.speaker === 'caller' && turn.recognized === false;
    if ((!text && !unrecognizedSpeech) || this.entries.length >= Transcript.MAX_TURNS) return;
    this.entries.push({ ...turn, text });
  }

  turns(): readonly TranscriptTurn[] {
    return this.entries;
  }
}
