/**
 * What the caller said, for a fake transcription server: every frame fed to the session is kept with the text
 * of the utterance it belongs to. A transcription request's audio is found in what was fed (the STT hands the
 * server the caller's samples unchanged), and the answer is the text of the utterances it covers, whole or
 * mostly: so the fake transcribes correctly however the STT cut the speech into requests.
 */

import { CANONICAL_RATE } from '../../codecs/index.ts';

/** An utterance counts as said in a request that holds at least this share of it. */
const COVERED_SHARE = 0.5;

interface Utterance {
  from: number;
  to: number;
  text: string;
}

export class CallerScript {
  private fed = new Int16Array(CANONICAL_RATE * 60);
  private length = 0;
  private readonly utterances: Utterance[] = [];

  /** Frames fed to the session, in order. */
  frame(frame: Int16Array): void {
    if (this.length + frame.length > this.fed.length) {
      const grown = new Int16Array(this.fed.length * 2);
      grown.set(this.fed);
      this.fed = grown;
    }
    this.fed.set(frame, this.length);
    this.length += frame.length;
  }

  /** The next `samples` fed are an utterance saying `text` ('' for sounds without words). */
  utterance(samples: number, text: string): void {
    this.utterances.push({ from: this.length, to: this.length + samples, text });
  }

  /** The words of the fed audio `audio` is a piece of; '' when it is not found or holds none. */
  textOf(audio: Int16Array): string {
    const start = this.locate(audio);
    if (start === null) return '';
    const end = start + audio.length;
    return this.utterances
      .filter((u) => {
        const overlap = Math.min(end, u.to) - Math.max(start, u.from);
        return u.text && overlap >= COVERED_SHARE * (u.to - u.from);
      })
      .map((u) => u.text)
      .join(' ');
  }

  private locate(audio: Int16Array): number | null {
    let probe = -1;
    let peak = 0;
    for (let i = 0; i < audio.length; i++) {
      const value = Math.abs(audio[i] as number);
      if (value > peak) {
        peak = value;
        probe = i;
      }
    }
    if (probe < 0) return null;
    const wanted = audio[probe] as number;
    for (let i = probe; i < this.length - audio.length + probe + 1; i++) {
      if (this.fed[i] !== wanted) continue;
      const start = i - probe;
      let same = true;
      for (let j = 0; j < audio.length && same; j += 7) same = this.fed[start + j] === audio[j];
      if (same) return start;
    }
    return null;
  }
}
