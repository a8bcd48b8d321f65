/**
 * A streaming STT out of a batch one (one request per utterance) and a voice activity detector, as LiveKit's
 * `stt/stream_adapter.ts` does. Frames go through the VAD; a `SpeechSegmenter` (hysteresis, engines/vad) turns
 * its probabilities into speech segments:
 * - speech start: `speech_started` (its `atMs` is ms of audio since the stream began), and the utterance is
 *   buffered from `preRollMs` before that start, so a soft first syllable is not clipped;
 * - speech end (the segmenter's `minSilenceMs` of silence, by default the platform's 500 ms endpointing): the
 *   utterance, with `END_PADDING_MS` of what followed, is transcribed and one `final` with `endOfTurn: true`
 *   is emitted;
 * - `flush()` does the same at once for speech in progress; `end()` too, then the iteration ends once every
 *   transcription is done;
 * - an utterance reaching `maxUtteranceMs` is cut there and transcribed (`final` with `endOfTurn: false`, sent
 *   once the next piece is heard, see `#settle`); the speech goes on into a new buffer, so memory stays bounded
 *   however long someone talks.
 *
 * An engine that can decode while the caller speaks (`IncrementalTranscriber`) is fed each utterance as the VAD
 * judges it, gives `partial`s as it goes, and finishes the decoding at the first pause (`pauseFinalMs` of
 * silence inside the speech, far shorter than the silence that ends the utterance): the words so far come as a
 * `final` with `endOfTurn: false` about a quarter of a second after the caller stops, and the speech end, once
 * the segmenter's `minSilenceMs` confirms it, is an `utterance_end`. Speech that resumes before then is decoded
 * as the next piece of the same utterance. Whether the caller's turn is over is the listener's decision (the
 * pipeline's endpointer), as with a streaming provider's interim finals. Without pauses (`pauseFinalMs` 0), the
 * engine is fed `minSilenceMs - END_PADDING_MS` behind (so it hears exactly the audio a batch request would) and
 * the final, with `endOfTurn`, follows the speech end by the end of decoding only.
 *
 * Finals come in utterance order, even when transcriptions overlap. An utterance the engine hears as nothing
 * (empty text: a cough, a door) produces no `final`. A failed transcription is an `error` event and the stream
 * goes on with the next utterance (the engine has already retried what it could). Aborting `signal`, or leaving
 * the `for await` loop early, cancels the transcription in flight and ends the iteration at once.
 */
import { type SegmentEvent, SpeechSegmenter } from '../vad/segmenter.ts';
import {
  DEFAULT_VAD_THRESHOLDS,
  type VadStream,
  type VadThresholds,
  type VoiceActivityDetector,
} from '../vad/types.ts';
import { AudioTimeline } from './audio-timeline.ts';
import { EventQueue } from './event-queue.ts';
import type { SpeechToText, SttEvent, SttStream, SttStreamOptions } from './types.ts';

const SAMPLES_PER_MS = 16;

/**
 * Audio kept after the segmenter's speech end: the segmenter puts the end at the first quiet window, and word
 * endings (unvoiced consonants, falling pitch) are often quieter than the voice before them.
 */
const END_PADDING_MS = 200;

/**
 * Audio kept while nobody speaks, counted back from the last window the VAD has judged. It must cover the
 * pre-roll plus how far back a speech start can lie when it is confirmed (the segmenter's `minSpeechMs`, plus
 * short dips below threshold inside it); a start older than this loses the part of its pre-roll that is gone.
 */
const IDLE_HISTORY_MS = 1_000;

export interface VadSegmentationOptions {
  /** Hysteresis of the segmenter; `minSilenceMs` is the silence that ends an utterance. */
  thresholds?: VadThresholds;
  /** Audio kept before the detected speech start. */
  preRollMs?: number;
  /** Longest utterance sent in one request; longer speech is cut into pieces this long. */
  maxUtteranceMs?: number;
  /**
   * Incremental engines only: silence inside speech after which the words so far are final (0: none; only the
   * utterance's end gives a final). Shorter than `thresholds.minSilenceMs`, or it has no effect.
   */
  pauseFinalMs?: number;
}

export const VAD_SEGMENTATION_DEFAULTS = {
  // 500 ms of silence ends a turn: the platform's default endpointing (docs/architecture.md, "Media path").
  thresholds: { ...DEFAULT_VAD_THRESHOLDS, minSilenceMs: 500 },
  // Silero's own default speech padding is 30 ms; 200 ms also keeps a quiet onset the VAD judged as silence.
  preRollMs: 200,
  // Whisper models take 30 s windows; past that, servers split anyway, and memory per call stays under 1 MB.
  maxUtteranceMs: 30_000,
  // Four 32 ms Silero windows: the VAD's own lag after the last syllable is ~90 ms more, and finishing a decoding
  // takes 5-40 ms, so the words are final ~250 ms after the caller stops (bench/stt.ts). Gaps inside words and
  // between them are shorter; a longer pause only splits the decoding, never the turn.
  pauseFinalMs: 120,
} as const satisfies Required<VadSegmentationOptions>;

/** What the adapter needs of the batch engine. */
export type BatchTranscriber = Pick<SpeechToText, 'transcribe'>;

/** One utterance decoded while it is heard: audio in order, then its final text. */
export interface IncrementalUtterance {
  feed(samples: Int16Array): void;
  /** Everything is fed: the text of the whole utterance. */
  finish(): Promise<{ text: string; language?: string }>;
  /** Drops the utterance (an abort); no more partials. */
  cancel(): void;
}

/** A batch engine that can also decode an utterance while it is spoken. */
export interface IncrementalTranscriber extends BatchTranscriber {
  /** Starts decoding an utterance; `onPartial` gets its hypothesis so far, as it changes. */
  utterance(options: SttStreamOptions, onPartial: (text: string) => void): IncrementalUtterance;
}

function isIncremental(stt: BatchTranscriber): stt is IncrementalTranscriber {
  return typeof (stt as Partial<IncrementalTranscriber>).utterance === 'function';
}

/** The utterance being decoded while it is heard, and how far into it the audio was fed (absolute sample). */
interface LiveUtterance {
  decoding: IncrementalUtterance;
  fedTo: number;
}

/** How a transcribed piece of speech ends. */
type PieceEnd =
  /** The utterance's end: its final ends the turn as far as this stream can tell. */
  | 'utterance'
  /** Cut at the length limit: held until the next piece says whether the utterance ended. */
  | 'cut'
  /** A pause inside the utterance: its words are final, the utterance may go on. */
  | 'pause';

export class VadSegmentedStream implements SttStream {
  readonly #stt: BatchTranscriber;
  readonly #incremental: IncrementalTranscriber | undefined;
  /** How far behind the judged audio an incremental engine is fed: the part of a silence that is not kept. */
  readonly #feedHoldbackSamples: number;
  /** Pause that finishes an incremental decoding (ms); 0 when the utterance's end alone does. */
  readonly #pauseFinalMs: number;
  #live: LiveUtterance | null = null;
  /** The utterance's words so far are final (a pause); more speech starts its next piece. */
  #pausedAfterFinal = false;
  readonly #language: string;
  readonly #vad: VadStream;
  readonly #segmenter: SpeechSegmenter;
  readonly #preRollSamples: number;
  readonly #maxUtteranceSamples: number;
  readonly #timeline = new AudioTimeline();
  readonly #queue: EventQueue<SttEvent>;
  /** Aborts the transcription in flight; aborted by the caller's signal or by leaving the loop. */
  readonly #controller = new AbortController();
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.#abort();
  /** VAD results are handled in push order, one push after the other. */
  #vadWork: Promise<void> = Promise.resolve();
  /** Transcriptions run in utterance order, so their finals do too. */
  #transcriptions: Promise<void> = Promise.resolve();
  /** Absolute sample where the utterance being buffered starts; null while nobody speaks. */
  #utteranceStart: number | null = null;
  /** The final of the last piece cut at the length limit, until the next piece says whether the turn ended. */
  #held: Extract<SttEvent, { type: 'final' }> | undefined;
  #inputClosed = false;
  #ending: Promise<void> | undefined;

  constructor(
    stt: BatchTranscriber,
    vad: VoiceActivityDetector,
    options: SttStreamOptions & VadSegmentationOptions,
  ) {
    const d = VAD_SEGMENTATION_DEFAULTS;
    this.#stt = stt;
    this.#incremental = isIncremental(stt) ? stt : undefined;
    this.#language = options.language;
    this.#vad = vad.createStream();
    this.#segmenter = SpeechSegmenter.for(vad, options.thresholds ?? d.thresholds);
    const pauseFinalMs = options.pauseFinalMs ?? d.pauseFinalMs;
    this.#pauseFinalMs =
      this.#incremental && pauseFinalMs > 0 && pauseFinalMs < this.#segmenter.thresholds.minSilenceMs
        ? pauseFinalMs
        : 0;
    // A piece ending at a pause keeps the pause's silence (~0.1 s), so the engine is fed as the VAD judges.
    this.#feedHoldbackSamples =
      this.#pauseFinalMs > 0
        ? 0
        : Math.max(0, this.#segmenter.thresholds.minSilenceMs - END_PADDING_MS) * SAMPLES_PER_MS;
    this.#preRollSamples = (options.preRollMs ?? d.preRollMs) * SAMPLES_PER_MS;
    this.#maxUtteranceSamples = Math.max(1, (options.maxUtteranceMs ?? d.maxUtteranceMs) * SAMPLES_PER_MS);
    this.#queue = new EventQueue<SttEvent>(() => this.#abort());
    this.#signal = options.signal;
    if (this.#signal?.aborted) this.#abort();
    else this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  push(frame: Int16Array): void {
    if (this.#inputClosed || frame.length === 0) return;
    this.#timeline.append(frame);
    // Settled into a value at once, so a failure waiting its turn in the chain is never an unhandled rejection.
    // No copy of the frame: the VAD reads it before `push` returns.
    const judged = this.#vad.push(frame).then(
      (probabilities) => ({ probabilities }),
      (error: unknown) => ({ error }),
    );
    this.#vadWork = this.#vadWork.then(async () => {
      const result = await judged;
      if ('error' in result) this.#queue.put({ type: 'error', error: asError(result.error) });
      else this.#judge(result.probabilities);
    });
  }

  flush(): void {
    if (this.#inputClosed) return;
    const upTo = this.#timeline.end;
    this.#vadWork = this.#vadWork.then(() => this.#closeUtterance(upTo));
  }

  end(): Promise<void> {
    if (this.#ending) return this.#ending;
    this.#inputClosed = true;
    const upTo = this.#timeline.end;
    this.#ending = (async () => {
      await this.#vadWork;
      this.#closeUtterance(upTo);
      await this.#transcriptions;
      this.#queue.close();
      this.#signal?.removeEventListener('abort', this.#onAbort);
    })();
    return this.#ending;
  }

  #judge(probabilities: number[]): void {
    for (const probability of probabilities) {
      const event = this.#segmenter.push(probability);
      if (event) this.#onSegment(event);
      const position = this.#segmenter.positionMs * SAMPLES_PER_MS;
      if (this.#utteranceStart === null) {
        this.#timeline.dropBefore(position - IDLE_HISTORY_MS * SAMPLES_PER_MS);
      } else if (this.#pauseFinalMs > 0 && this.#followPause(position)) {
        // The pause finished the words so far, or the utterance waits in a pause for more speech.
      } else if (position - this.#utteranceStart >= this.#maxUtteranceSamples) {
        this.#transcribe(this.#utteranceStart, position, 'cut');
        this.#utteranceStart = position;
        this.#beginLive(position);
      } else {
        this.#feedLive(position - this.#feedHoldbackSamples);
      }
    }
  }

  /**
   * Pauses inside the utterance, at `position` (an absolute sample): a long enough one finishes the decoding of
   * the words so far; speech after it starts the next piece there, so no audio is lost between pieces. True while
   * the utterance is in such a pause (nothing to feed).
   */
  #followPause(position: number): boolean {
    const silenceStartMs = this.#segmenter.silenceStartMs;
    if (this.#pausedAfterFinal) {
      if (silenceStartMs !== null) return true;
      this.#pausedAfterFinal = false;
      this.#beginLive(this.#utteranceStart ?? position);
      return false;
    }
    if (silenceStartMs === null || this.#segmenter.positionMs - silenceStartMs < this.#pauseFinalMs)
      return false;
    this.#transcribe(this.#utteranceStart ?? position, position, 'pause');
    this.#utteranceStart = position;
    this.#pausedAfterFinal = true;
    return true;
  }

  /** An incremental engine starts decoding the utterance that starts at `from` (an absolute sample). */
  #beginLive(from: number): void {
    if (!this.#incremental) return;
    const signal = this.#controller.signal;
    const decoding = this.#incremental.utterance({ language: this.#language, signal }, (text) => {
      if (!signal.aborted) this.#queue.put({ type: 'partial', text });
    });
    this.#live = { decoding, fedTo: from };
  }

  #feedLive(to: number): void {
    if (this.#live) feed(this.#live, this.#timeline, to);
  }

  #onSegment(event: SegmentEvent): void {
    if (event.type === 'speech_start') {
      this.#utteranceStart = Math.max(0, event.atMs * SAMPLES_PER_MS - this.#preRollSamples);
      this.#queue.put({ type: 'speech_started', atMs: event.atMs });
      this.#beginLive(this.#utteranceStart);
      return;
    }
    if (this.#utteranceStart === null) return;
    if (this.#endInPause(event.atMs)) return;
    const end = Math.min(event.atMs + END_PADDING_MS, event.decidedAtMs) * SAMPLES_PER_MS;
    this.#transcribe(this.#utteranceStart, end, 'utterance');
    this.#utteranceStart = null;
  }

  /** Ends the utterance in progress, if any, at `upTo` (an absolute sample): flush and end. */
  #closeUtterance(upTo: number): void {
    const ended = this.#segmenter.finish();
    if (this.#utteranceStart === null) return;
    if (this.#endInPause(ended?.atMs ?? upTo / SAMPLES_PER_MS)) return;
    this.#transcribe(this.#utteranceStart, upTo, 'utterance');
    this.#utteranceStart = null;
  }

  /**
   * The utterance ends while its words are already final (it ended in the pause that finished them): nothing
   * is left to decode, and `utterance_end` says that the speech is over. False otherwise.
   */
  #endInPause(atMs: number): boolean {
    if (!this.#pausedAfterFinal) return false;
    this.#pausedAfterFinal = false;
    this.#utteranceStart = null;
    const pieces = this.#transcriptions;
    const signal = this.#controller.signal;
    // After the pause's final, in order.
    this.#transcriptions = pieces.then(() => {
      if (!signal.aborted) this.#queue.put({ type: 'utterance_end', atMs });
    });
    return true;
  }

  /** Transcribes samples [from, to) after the transcriptions before it; `end` says how the piece ends. */
  #transcribe(from: number, to: number, end: PieceEnd): void {
    const endOfTurn = end === 'utterance';
    const live = this.#live;
    this.#live = null;
    if (live) feed(live, this.#timeline, to);
    const audio = live ? null : this.#timeline.slice(from, to);
    const signal = this.#controller.signal;
    this.#transcriptions = this.#transcriptions.then(async () => {
      if (signal.aborted) return;
      try {
        const result = live
          ? await live.decoding.finish()
          : audio === null || audio.length === 0
            ? { text: '' }
            : await this.#stt.transcribe(audio, { language: this.#language, signal });
        if (signal.aborted) return;
        if (end === 'pause') this.#finalNow(result);
        else this.#settle(result, endOfTurn);
      } catch (error) {
        if (signal.aborted) return;
        this.#releaseHeld(endOfTurn);
        this.#queue.put({ type: 'error', error: asError(error) });
      }
    });
  }

  /**
   * The text of a piece cut at the length limit is held until the next piece of the same utterance is heard:
   * if that one is empty (the cut fell on the last syllable or the closing silence), the held text is what
   * ends the turn. So an utterance with any words always ends with one `final` whose `endOfTurn` is true.
   */
  #settle(result: { text: string; language?: string }, endOfTurn: boolean): void {
    const text = result.text.trim();
    if (text === '') {
      // An empty cut piece says nothing about the turn: what is held waits for the next piece.
      if (endOfTurn) this.#releaseHeld(true);
      return;
    }
    this.#releaseHeld(false);
    const final: Extract<SttEvent, { type: 'final' }> = {
      type: 'final',
      text,
      endOfTurn,
      ...(result.language === undefined ? {} : { language: result.language }),
    };
    if (endOfTurn) this.#queue.put(final);
    else this.#held = final;
  }

  /** The words of a piece ended by a pause: final, the utterance not over (after any held text). */
  #finalNow(result: { text: string; language?: string }): void {
    this.#releaseHeld(false);
    const text = result.text.trim();
    if (text === '') return;
    this.#queue.put({
      type: 'final',
      text,
      endOfTurn: false,
      ...(result.language === undefined ? {} : { language: result.language }),
    });
  }

  #releaseHeld(endOfTurn: boolean): void {
    if (this.#held) this.#queue.put({ ...this.#held, endOfTurn });
    this.#held = undefined;
  }

  #abort(): void {
    this.#inputClosed = true;
    this.#live?.decoding.cancel();
    this.#live = null;
    this.#controller.abort();
    this.#queue.discard();
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }
}

/** Feeds a live utterance the audio it has not had, up to `to` (an absolute sample). */
function feed(live: LiveUtterance, timeline: AudioTimeline, to: number): void {
  if (to <= live.fedTo) return;
  live.decoding.feed(timeline.slice(live.fedTo, to));
  live.fedTo = to;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
