/**
 * The Deepgram-compatible live STT of `bench:conversation`: it "recognises" by knowing the script of what the
 * caller says (it is the outside world), but times every message from the audio it actually receives, as a
 * real streaming STT does: an energy detector on each 20 ms window finds where speech starts and stops, and
 * - `SpeechStarted` at the first loud window (`vad_events`);
 * - interim `Results` as words become known: the i-th of n words once the utterance has run i/n of its
 *   scripted voiced length plus `WORD_LAG_MS`, at most one every `INTERIM_EVERY_MS`;
 * - the final `Results` (`is_final`, `speech_final`) after the client's `endpointing` ms of silence: with the
 *   rest of the scripted text (punctuated, as `smart_format` gives it) when the utterance is over, or, when the
 *   silence is a pause inside it (more than `REST_MS` of its voice still to come), the words heard so far, the
 *   rest following in the next stretch's results, as a real STT commits at a pause; an utterance with no words
 *   (noise) gets an empty final, as Deepgram answers noise;
 * - `UtteranceEnd` after `utterance_end_ms` of silence past the last word.
 * Each stretch of voice takes the next scripted utterance; stretches beyond the script have no words.
 */
import {
  resultsMessage,
  speechStartedMessage,
  utteranceEndMessage,
} from '../../engines/stt/testing/fake-deepgram-messages.ts';
import type { FakeDeepgramRecognizer } from '../../engines/stt/testing/fake-deepgram-server.ts';
import { VoiceWindows } from '../../engines/stt/testing/voice-windows.ts';

const WINDOW_MS = 20;
/** Mean absolute amplitude of a window heard as voice (about -40 dBFS). */
const VOICE_LEVEL = 300;
/** How long after a word's audio the recogniser knows it. */
export const WORD_LAG_MS = 150;
/** Interim results at most this often. */
export const INTERIM_EVERY_MS = 100;
/** A commit with more of the utterance's voice than this still to come is a pause inside it. */
const REST_MS = 300;

type Message = Record<string, unknown>;

export interface ScriptedUtterance {
  text: string;
  /** The utterance's length as played, for when each word is known. */
  voicedMs: number;
}

interface Open {
  script: ScriptedUtterance;
  /** The script's words, as the results give them. */
  words: string[];
  startMs: number;
  lastVoiceMs: number;
  wordsSent: number;
  /** Words already given in finals (commits at pauses inside the utterance). */
  wordsFinal: number;
  lastInterimMs: number;
  /** The STT committed at a pause inside the utterance; its voice has not come back yet. */
  paused: boolean;
}

export class ScriptedRecognizer implements FakeDeepgramRecognizer {
  readonly #endpointingMs: number;
  readonly #utteranceEndMs: number;
  readonly #voice = new VoiceWindows(VOICE_LEVEL);
  #script: ScriptedUtterance[] = [];
  #windows = 0;
  #open: Open | null = null;
  #awaitingUtteranceEndMs: number | null = null;

  constructor(query: URLSearchParams) {
    this.#endpointingMs = Number(query.get('endpointing') ?? 10);
    this.#utteranceEndMs = Number(query.get('utterance_end_ms') ?? 1000);
  }

  /** What the caller will say, in order. */
  expect(script: readonly ScriptedUtterance[]): void {
    this.#script = [...script];
  }

  get #nowMs(): number {
    return this.#windows * WINDOW_MS;
  }

  audio(samples: Int16Array): Message[] {
    const out: Message[] = [];
    for (const voiced of this.#voice.push(samples)) this.#judge(voiced, out);
    return out;
  }

  finalize(): Message[] {
    const out: Message[] = [];
    if (this.#open) this.#finish(out, false, true);
    else
      out.push(
        resultsMessage({
          transcript: '',
          isFinal: true,
          fromFinalize: true,
          start: this.#nowMs / 1000,
          duration: 0,
        }),
      );
    return out;
  }

  close(): Message[] {
    const out: Message[] = [];
    if (this.#open) this.#finish(out, false, false);
    return out;
  }

  #judge(loud: boolean, out: Message[]): void {
    const startMs = this.#nowMs;
    this.#windows++;
    const nowMs = this.#nowMs;
    let open = this.#open;
    if (loud && open === null) {
      const script = this.#script.shift() ?? { text: '', voicedMs: 0 };
      open = {
        script,
        words: script.text.split(/\s+/).filter(Boolean),
        startMs,
        lastVoiceMs: nowMs,
        wordsSent: 0,
        wordsFinal: 0,
        lastInterimMs: Number.NEGATIVE_INFINITY,
        paused: false,
      };
      this.#open = open;
      this.#awaitingUtteranceEndMs = null;
      out.push(speechStartedMessage(startMs / 1000));
    } else if (loud && open) {
      if (open.paused) {
        // The same utterance goes on after a pause the STT committed.
        open.paused = false;
        this.#awaitingUtteranceEndMs = null;
        out.push(speechStartedMessage(startMs / 1000));
      }
      open.lastVoiceMs = nowMs;
    }
    if (open) {
      if (!open.paused) this.#interim(open, nowMs, out);
      if (!loud && !open.paused && nowMs - open.lastVoiceMs >= this.#endpointingMs) this.#commit(open, out);
    }
    const lastWordEnd = this.#awaitingUtteranceEndMs;
    if (lastWordEnd !== null && nowMs - lastWordEnd >= this.#utteranceEndMs) {
      this.#awaitingUtteranceEndMs = null;
      out.push(utteranceEndMessage(lastWordEnd / 1000));
    }
  }

  #interim(open: Open, nowMs: number, out: Message[]): void {
    const words = open.words;
    if (words.length === 0 || nowMs - open.lastInterimMs < INTERIM_EVERY_MS) return;
    const heardMs = nowMs - open.startMs - WORD_LAG_MS;
    const known = Math.min(
      words.length,
      Math.floor((heardMs / Math.max(1, open.script.voicedMs)) * words.length),
    );
    if (known <= open.wordsSent || known <= open.wordsFinal) return;
    open.wordsSent = known;
    open.lastInterimMs = nowMs;
    const transcript = words.slice(open.wordsFinal, known).join(' ');
    out.push(
      resultsMessage({ transcript, start: open.startMs / 1000, duration: (nowMs - open.startMs) / 1000 }),
    );
  }

  /** `speech_final` after the endpointing silence: the utterance's end, or a pause inside it. */
  #commit(open: Open, out: Message[]): void {
    const words = open.words;
    const heardMs = open.lastVoiceMs - open.startMs;
    if (open.script.voicedMs - heardMs <= REST_MS || words.length === 0) {
      this.#finish(out, true, false);
      return;
    }
    const known = Math.min(
      words.length - 1,
      Math.floor((heardMs / Math.max(1, open.script.voicedMs)) * words.length),
    );
    const transcript = words.slice(open.wordsFinal, known).join(' ');
    open.wordsFinal = Math.max(open.wordsFinal, known);
    open.wordsSent = open.wordsFinal;
    open.paused = true;
    if (transcript) this.#awaitingUtteranceEndMs = open.lastVoiceMs;
    out.push(
      resultsMessage({
        transcript,
        isFinal: true,
        speechFinal: true,
        start: open.startMs / 1000,
        duration: heardMs / 1000,
      }),
    );
  }

  #finish(out: Message[], speechFinal: boolean, fromFinalize: boolean): void {
    const open = this.#open;
    if (!open) return;
    this.#open = null;
    const transcript = open.words.slice(open.wordsFinal).join(' ');
    if (transcript) this.#awaitingUtteranceEndMs = open.lastVoiceMs;
    out.push(
      resultsMessage({
        transcript,
        isFinal: true,
        speechFinal,
        fromFinalize,
        start: open.startMs / 1000,
        duration: (open.lastVoiceMs - open.startMs) / 1000,
      }),
    );
  }
}
