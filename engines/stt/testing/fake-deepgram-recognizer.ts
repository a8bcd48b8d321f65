/**
 * The "recognition" of the fake Deepgram server: it hears speech by energy alone and answers each utterance it
 * hears with the next scripted transcript, following Deepgram's message sequence on audio time (not wall time):
 * `SpeechStarted` at the first loud window; one interim `Results` (the first half of the words) once 300 ms of
 * the utterance went by; `Results` with `is_final` and `speech_final` after `endpointing` ms of silence;
 * `UtteranceEnd` after `utterance_end_ms` of silence. `Finalize` finalises the utterance in progress
 * (`from_finalize`); `CloseStream` does too, without `speech_final`.
 */
import { resultsMessage, speechStartedMessage, utteranceEndMessage } from './fake-deepgram-messages.ts';
import { VoiceWindows } from './voice-windows.ts';

const WINDOW_S = 0.02;
/** Mean absolute amplitude over a 20 ms window above which the fake hears speech (about -36 dBFS). */
const SPEECH_LEVEL = 500;
/**
 * The `endpointing` a client of this fake should ask for when it feeds whole spoken sentences: the fake answers
 * each stretch of voice with one whole scripted transcript, so a shorter endpointing than the longest pause
 * inside a sentence (eSpeak NG pauses about 180 ms at a comma) would cut a sentence into stretches that each
 * take a transcript of their own. A real Deepgram sends the words heard so far instead.
 */
export const FAKE_ENDPOINTING_MS = 200;
/** Audio into an utterance before the interim result. */
const INTERIM_AFTER_S = 0.3;

type Message = Record<string, unknown>;

export class FakeRecognizer {
  readonly #transcripts: readonly string[];
  readonly #endpointingS: number;
  readonly #utteranceEndS: number;
  readonly #voice = new VoiceWindows(SPEECH_LEVEL);
  #windows = 0;
  #next = 0;
  /** The utterance in progress: where it started, its last loud window, and what was sent of it. */
  #utterance: { startS: number; lastVoiceS: number; interim: boolean } | null = null;
  /** After a final: the end of its last word, until UtteranceEnd is sent (or speech resumes). */
  #awaitingUtteranceEnd: number | null = null;

  constructor(transcripts: readonly string[], endpointingMs: number, utteranceEndMs: number) {
    this.#transcripts = transcripts;
    this.#endpointingS = endpointingMs / 1000;
    this.#utteranceEndS = utteranceEndMs / 1000;
  }

  /** Audio time heard so far, seconds. */
  get positionS(): number {
    return this.#windows * WINDOW_S;
  }

  audio(samples: Int16Array): Message[] {
    const out: Message[] = [];
    for (const voiced of this.#voice.push(samples)) out.push(...this.#judge(voiced));
    return out;
  }

  finalize(): Message[] {
    return this.#finish(false, true);
  }

  close(): Message[] {
    return this.#finish(false, false);
  }

  #judge(loud: boolean): Message[] {
    const start = this.positionS;
    this.#windows++;
    const now = this.positionS;
    const out: Message[] = [];
    const u = this.#utterance;
    if (loud) {
      if (u === null) {
        this.#utterance = { startS: start, lastVoiceS: now, interim: false };
        this.#awaitingUtteranceEnd = null;
        out.push(speechStartedMessage(start));
      } else {
        u.lastVoiceS = now;
        if (!u.interim && now - u.startS >= INTERIM_AFTER_S) {
          u.interim = true;
          const words = this.#transcript().split(/\s+/);
          const half = words.slice(0, Math.max(1, Math.ceil(words.length / 2))).join(' ');
          out.push(resultsMessage({ transcript: half, start: u.startS, duration: now - u.startS }));
        }
      }
      return out;
    }
    if (u !== null && now - u.lastVoiceS >= this.#endpointingS) out.push(...this.#finish(true, false));
    const lastWordEnd = this.#awaitingUtteranceEnd;
    if (lastWordEnd !== null && now - lastWordEnd >= this.#utteranceEndS) {
      this.#awaitingUtteranceEnd = null;
      out.push(utteranceEndMessage(lastWordEnd));
    }
    return out;
  }

  /** The final Results of the utterance in progress; an empty one when there is none. */
  #finish(speechFinal: boolean, fromFinalize: boolean): Message[] {
    const u = this.#utterance;
    if (u === null) {
      return fromFinalize
        ? [
            resultsMessage({
              transcript: '',
              isFinal: true,
              fromFinalize,
              start: this.positionS,
              duration: 0,
            }),
          ]
        : [];
    }
    const transcript = this.#transcript();
    this.#next++;
    this.#utterance = null;
    this.#awaitingUtteranceEnd = u.lastVoiceS;
    return [
      resultsMessage({
        transcript,
        isFinal: true,
        speechFinal,
        fromFinalize,
        start: u.startS,
        duration: u.lastVoiceS - u.startS,
      }),
    ];
  }

  #transcript(): string {
    return this.#transcripts[Math.min(this.#next, this.#transcripts.length - 1)] ?? '';
  }
}
