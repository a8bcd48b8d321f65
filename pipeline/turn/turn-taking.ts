import { samplePeak } from '../../codecs/index.ts';
import type { SttEvent, SttStream } from '../../engines/stt/types.ts';
import { SpeechSegmenter } from '../../engines/vad/segmenter.ts';
import type { VadStream, VoiceActivityDetector } from '../../engines/vad/types.ts';
import { SttAudioFeed } from '../stt-feed.ts';
import { requiredSilence } from './end-of-turn.ts';
import { Endpointer, type TurnEnd } from './endpointing.ts';
import { type InterruptionEvent, InterruptionPolicy, type InterruptionSettings } from './interruption.ts';

/**
 * A batch STT transcribes after the caller stops, so its final can arrive after the endpointer declared the
 * turn over. This long the turn waits for those words before it is dropped as speech without words (a cough).
 */
/**
 * When the VAD's last speech end lies this far before where the endpointer places the end of speech (decision
 * time less the silence it waited), it belongs to an earlier utterance: the VAD missed this one. The two agree
 * to within a VAD window when both saw the same speech.
 */
const STALE_SPEECH_END_MS = 3000;

export const LATE_FINAL_WAIT_MS = 2500;

/**
 * A turn that has words, and a partial of more speech that no final has confirmed yet (a streaming STT still
 * decoding the caller's last words), waits this long for that final: the STT is asked for it at once, and a
 * partial that comes to nothing (noise heard as words, then dropped) holds the answer no longer than this.
 */
export const UNCONFIRMED_WORDS_WAIT_MS = 400;

/**
 * Audio goes to the STT frame by frame once the caller's voice falls quiet, until this long after it was last
 * heard: the STT's endpointing waits on that silence. Otherwise (speech, and longer quiet stretches) it goes in
 * chunks (stt-feed.ts).
 */
const STT_PROMPT_HOLD_MS = 1000;

/**
 * While the agent talks, caller frames with sound in them go to the STT at once (the first word of an
 * interruption is what stops the agent, and a chunk's wait would delay it), and so does everything for this
 * long after the last such frame; a line that stays quiet goes in chunks, as it does between turns. A frame is
 * "with sound" when a sample reaches `AUDIBLE_PEAK` (-50 dBFS): below that a phone caller is not talking to us
 * (the VAD's silence gate skips such windows too), and a noisy line above it is simply fed frame by frame.
 * On a quiet line this cuts the STT socket's messages while the agent talks fivefold.
 */
const AUDIBLE_PEAK = 104;
const AUDIBLE_HOLD_MS = 300;

/**
 * VAD pushes failed in a row (20 ms frames: 1 s of audio) after which, with no STT either, nothing hears the
 * caller. Fewer are a blip: their windows count as silence.
 */
const VAD_FAILURES_DEAF = 50;

/** Pushes remembered for a failed VAD push to know its windows: 10 s of 20 ms frames waiting on the VAD. */
const VAD_PUSHES_REMEMBERED = 512;

export interface CallerTurn extends TurnEnd {
  /** What the caller said this turn; empty when no words were recognised. */
  text: string;
  /**
   * Whether words were recognised. False: the caller spoke (the VAD heard it) but no STT gave words for it: no
   * engine serves the call's language, or the engine failed.
   */
  recognized: boolean;
  /** Call time (ms of audio) at which the caller began speaking: the VAD onset of the turn's first speech. */
  speechStartMs: number;
  /** Call time (ms of audio) at which the caller stopped speaking. */
  speechEndMs: number;
  /** Wall time at which the final transcript was in hand. */
  finalAtWallMs: number;
  /** Wall time at which the turn was decided: from here on, everything until the agent speaks is the reply's. */
  decidedAtWallMs: number;
}

export interface TurnTakingListener {
  callerTurn(turn: CallerTurn): void;
  /** The caller spoke and the turn ended, but the STT failed to give their words (`turn` has none). */
  callerTurnLost(turn: CallerTurn, error: Error): void;
  /** The caller spoke and the turn ended, but no words came for it (noise, a cough, speech the STT missed). */
  wordlessTurn(end: TurnEnd): void;
  interruption(event: InterruptionEvent): void;
  transcript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void;
  sttError(error: Error): void;
  /**
   * Words are no longer recognised for the rest of the call (the STT stream ended or broke, or the session gave
   * up on it): turns go on by voice activity alone, as unrecognised speech.
   */
  recognitionLost(error: Error): void;
  /** Nothing can hear the caller any more: no STT, and the VAD failed. */
  deaf(error: Error): void;
  /**
   * While the turn is undecided: the caller's words as they stand once the caller has stopped and the STT has
   * given them all (a reply may start on them), or null once the caller goes on (speech resumed, or words not
   * yet final). The turn that ends may still have other words.
   */
  earlyWords?(text: string | null): void;
}

export interface TurnTakingSettings {
  endpointingMs: number;
  interruptions: InterruptionSettings;
  /**
   * The STT transcribes each utterance once it has ended (no partials, a VAD-segmented batch engine): its
   * finals' `endOfTurn` only means its utterance ended, and a turn's words arrive after the turn ended.
   */
  batchStt: boolean;
}

/** A turn the endpointer ended whose words are not all in yet. */
interface PendingTurn extends TurnEnd {
  /** Give up waiting for words at this call time. */
  deadlineMs: number;
  /** The words arrived and end with "and", "aur", "umm": the turn ends here unless the caller goes on. */
  holdUntilMs: number | null;
}

/**
 * Listens to the caller: every inbound frame goes to the VAD and the STT; speech segments and transcripts drive
 * the endpointer (when the caller's turn is over) and the interruption policy (what caller speech does while the
 * agent talks). Time is call time, ms of caller audio.
 *
 * When the endpointer ends a turn before its words are in (a batch STT), the turn waits for them: speech that
 * resumes meanwhile continues the same turn, and words ending in a conjunction or filler get the longer silence
 * the endpointer would have given them had it known them.
 */
export class TurnTaking {
  private readonly vad: VadStream;
  private readonly vadWindowSamples: number;
  private readonly segmenter: SpeechSegmenter;
  private readonly endpointer: Endpointer;
  private readonly sttFeed: SttAudioFeed | null;
  readonly interruptions: InterruptionPolicy;
  /** Whether an STT gives words; without one, turns are taken by voice activity alone. */
  private recognizing: boolean;
  /** VAD onset of the current turn's first speech; null until the turn's first speech. */
  private turnSpeechStartMs: number | null = null;
  /** VAD onset of the latest speech. */
  private lastSpeechStartMs = 0;
  /** A VAD speech segment ended since the last caller turn ended: the caller spoke this turn. */
  private spokeThisTurn = false;
  private nowMs = 0;
  private speaking = false;
  private lastSpeechEndMs = 0;
  private lastSpeechEndDecidedMs = -1;
  /** Finals since the last caller turn ended. */
  private words: string[] = [];
  /** A partial with words came after the latest final: the STT has not confirmed the caller's last words. */
  private unconfirmedPartial = false;
  private lastFinalAtMs = -1;
  private lastFinalWallMs = 0;
  /** An STT failure since the last caller turn ended. */
  private sttFailure: Error | null = null;
  private pending: PendingTurn | null = null;
  /**
   * A turn given up on for want of words. Words that still come for it (a batch STT slowed down by load) end
   * it after all, unless the caller speaks again first: otherwise the caller waits for an answer to words the
   * agent holds but never answers.
   */
  private lapsed: TurnEnd | null = null;
  /** End of the last window loud enough to start speech while the caller was not speaking (a candidate). */
  private loudAtMs: number | null = null;
  /** Latest sign of the caller's voice (call time): a window loud enough to start speech, or a speech end. */
  private lastVoiceMs = Number.NEGATIVE_INFINITY;
  /** Latest caller frame with sound in it while the agent talked (call time). */
  private lastAudibleMs = Number.NEGATIVE_INFINITY;
  /** Whether the VAD's latest window was loud enough to start speech. */
  private voiceNow = false;
  /** Samples pushed to the VAD in all, after each of the latest pushes (a ring), and pushes sent and answered. */
  private readonly vadSamplesAfterPush = new Float64Array(VAD_PUSHES_REMEMBERED);
  private vadPushes = 0;
  private vadAnswers = 0;
  private vadFailuresInARow = 0;
  private deaf = false;
  private closed = false;

  constructor(
    detector: VoiceActivityDetector,
    /** Null: no STT serves this call (its language), so turns are taken by voice activity alone. */
    private readonly stt: SttStream | null,
    private readonly settings: TurnTakingSettings,
    private readonly listener: TurnTakingListener,
    private readonly wallNow: () => number,
  ) {
    this.vad = detector.createStream();
    this.vadWindowSamples = detector.windowSamples;
    this.segmenter = SpeechSegmenter.for(detector);
    this.endpointer = new Endpointer({ endpointingMs: settings.endpointingMs });
    this.sttFeed = stt ? new SttAudioFeed(stt) : null;
    this.recognizing = stt !== null;
    this.interruptions = new InterruptionPolicy(settings.interruptions);
    if (stt) void this.readTranscripts(stt);
  }

  /** Whether the caller is speaking (per the VAD). */
  get callerSpeaking(): boolean {
    return this.speaking;
  }

  /** Whether an STT gives the caller's words (false: turns by voice activity alone). */
  get recognizesWords(): boolean {
    return this.recognizing;
  }

  /** Where the caller's last speech ended (call time), 0 before any. */
  get quietSinceMs(): number {
    return this.lastSpeechEndMs;
  }

  /** One inbound frame; `audioMs` is the call time at its end. */
  frame(frame: Int16Array, audioMs: number): void {
    if (this.closed) return;
    this.nowMs = audioMs;
    if (this.interruptions.agentSpeaking && samplePeak(frame) >= AUDIBLE_PEAK) this.lastAudibleMs = audioMs;
    const prompt =
      (this.interruptions.agentSpeaking && audioMs - this.lastAudibleMs <= AUDIBLE_HOLD_MS) ||
      (!this.voiceNow && audioMs - this.lastVoiceMs < STT_PROMPT_HOLD_MS);
    if (this.recognizing) this.sttFeed?.push(frame, prompt);
    const before = this.vadPushes === 0 ? 0 : this.samplesAfterPush(this.vadPushes - 1);
    this.vadSamplesAfterPush[this.vadPushes++ % VAD_PUSHES_REMEMBERED] = before + frame.length;
    // The VAD answers pushes in order, so its results are taken as they come, without a chain of our own.
    this.vad.push(frame).then(this.onProbabilities, this.onVadFailure);
    this.emitInterruptions(this.interruptions.tick(audioMs));
    this.onTurnEnd(this.endpointer.tick(audioMs));
    this.checkPending();
  }

  private readonly onProbabilities = (probabilities: readonly number[]): void => {
    this.vadAnswers++;
    this.vadFailuresInARow = 0;
    if (this.closed) return;
    for (let i = 0; i < probabilities.length; i++) this.judge(probabilities[i] as number);
  };

  /**
   * A failed inference loses its windows' judgement, not their time: they count as silence. With no STT, a VAD
   * that keeps failing leaves nothing to hear the caller.
   */
  private readonly onVadFailure = (error: unknown): void => {
    const push = this.vadAnswers++;
    this.vadFailuresInARow++;
    if (this.closed) return;
    if (!this.recognizing && !this.deaf && this.vadFailuresInARow >= VAD_FAILURES_DEAF) {
      this.deaf = true;
      this.listener.deaf(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    const due = Math.floor(this.samplesAfterPush(push) / this.vadWindowSamples);
    const judged = Math.round(this.segmenter.positionMs / this.segmenter.windowMs);
    for (let w = judged; w < due; w++) this.judge(0);
  };

  private samplesAfterPush(push: number): number {
    return this.vadSamplesAfterPush[push % VAD_PUSHES_REMEMBERED] as number;
  }

  /** The VAD's next window. */
  private judge(probability: number): void {
    const event = this.segmenter.push(probability);
    this.voiceNow = probability >= this.segmenter.thresholds.activation;
    if (this.voiceNow) {
      this.lastVoiceMs = this.segmenter.positionMs;
      if (!this.speaking) this.loudAtMs = this.segmenter.positionMs;
    }
    // Voice after the STT's commit, in the speech the VAD has not seen end: the caller went on.
    if (this.voiceNow && this.speaking && this.endpointer.onVoice(this.segmenter.positionMs))
      this.listener.earlyWords?.(null);
    if (!event) {
      if (this.voiceNow) this.emitInterruptions(this.interruptions.voiced(this.segmenter.positionMs));
      return;
    }
    if (event.type === 'speech_start') {
      this.speaking = true;
      this.loudAtMs = null;
      this.lastSpeechStartMs = event.atMs;
      this.turnSpeechStartMs ??= event.atMs;
      // The caller goes on after a pause: still the same turn.
      this.pending = null;
      this.lapsed = null;
      this.listener.earlyWords?.(null);
    } else {
      this.speaking = false;
      this.spokeThisTurn = true;
      this.lastSpeechEndMs = event.atMs;
      this.lastSpeechEndDecidedMs = event.decidedAtMs;
      this.lastVoiceMs = Math.max(this.lastVoiceMs, event.atMs);
    }
    this.emitInterruptions(this.interruptions.onVad(event));
    this.onTurnEnd(this.endpointer.onVad(event));
    if (event.type === 'speech_end') this.offerEarlyWords();
  }

  /** The agent's reply started playing (or stopped); the interruption policy needs to know. */
  agentStarted(interruptible: boolean): void {
    this.emitInterruptions(this.interruptions.agentStarted(this.nowMs, { interruptible }));
  }

  agentStopped(): void {
    this.emitInterruptions(this.interruptions.agentStopped(this.nowMs));
  }

  close(): void {
    this.closed = true;
    if (this.recognizing) this.sttFeed?.flush();
    this.stt?.end().catch(() => undefined);
  }

  /**
   * Stops asking the STT for words, for the rest of the call: turns go on by voice activity alone. A turn
   * waiting for its words ends now, as unrecognised speech.
   */
  stopRecognition(error: Error): void {
    if (!this.recognizing || this.closed) return;
    this.recognizing = false;
    this.stt?.end().catch(() => undefined);
    this.listener.recognitionLost(error);
    this.checkPending();
  }

  private async readTranscripts(stt: SttStream): Promise<void> {
    let failure: Error | null = null;
    try {
      for await (const event of stt) {
        if (this.closed) break;
        if (event.type === 'error') this.onSttError(event.error);
        else if (event.type === 'partial' || event.type === 'final') this.onTranscript(event);
      }
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
    if (!this.closed) this.stopRecognition(failure ?? new Error('the transcription stream ended'));
  }

  private onTranscript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void {
    if (!this.recognizing) return;
    this.listener.transcript(event);
    const text = event.text.trim();
    if (event.type === 'final' && text) {
      this.words.push(text);
      this.lastFinalAtMs = this.nowMs;
      this.lastFinalWallMs = this.wallNow();
    }
    this.unconfirmedPartial = event.type === 'partial' ? text !== '' : false;
    this.emitInterruptions(this.interruptions.onTranscript(event, this.nowMs));
    const forEndpointer =
      event.type === 'final' && this.settings.batchStt ? { ...event, endOfTurn: false } : event;
    this.onTurnEnd(this.endpointer.onTranscript(forEndpointer, this.nowMs));
    this.checkPending();
    const lapsed = this.lapsed;
    if (lapsed && this.words.length > 0 && !this.pending && !this.speaking) {
      this.finishTurn({ ...lapsed, atMs: this.nowMs, endpointMs: this.nowMs - this.lastSpeechEndMs });
    }
    if (event.type === 'final' || text !== '') this.offerEarlyWords();
  }

  /**
   * The turn is still open: its words so far, when the caller has stopped and they are all in, may be answered
   * early; new words not yet final mean the caller went on.
   */
  private offerEarlyWords(): void {
    if (!this.listener.earlyWords || !this.recognizing || this.words.length === 0) return;
    if (this.unconfirmedPartial) this.listener.earlyWords(null);
    // The STT's commit says the caller stopped while the VAD, a window or two behind, may still hear them.
    else if ((!this.speaking || this.endpointer.committed) && this.wordsComplete())
      this.listener.earlyWords(this.words.join(' ').trim());
  }

  private onSttError(error: Error): void {
    if (!this.recognizing) return;
    this.sttFailure = error;
    this.listener.sttError(error);
    const pending = this.pending;
    if (!pending) return;
    if (this.words.length > 0) this.finishTurn(pending);
    else this.loseTurn(pending, error);
  }

  /** Whether the words of everything the caller said this turn are in. */
  private wordsComplete(): boolean {
    // By voice activity alone, the turn is complete once its speech has ended: no words will come.
    if (!this.recognizing) return this.spokeThisTurn && !this.speaking;
    if (this.words.length === 0) return false;
    // A batch STT's final for the latest speech comes after that speech ended.
    if (this.settings.batchStt) return this.lastFinalAtMs >= this.lastSpeechEndDecidedMs;
    return !this.unconfirmedPartial;
  }

  /**
   * Speech may be resuming: the VAD heard a loud window but confirms speech only after `minSpeechMs` (250 ms),
   * by which time the endpointer may have counted a short pause as the end of the turn. A turn does not end
   * while this is undecided.
   */
  private resuming(): boolean {
    if (this.speaking || this.loudAtMs === null) return false;
    return this.segmenter.positionMs - this.loudAtMs < this.segmenter.thresholds.minSilenceMs;
  }

  private onTurnEnd(end: TurnEnd | null | undefined): void {
    if (!end) return;
    if (this.wordsComplete() && !this.resuming()) {
      this.finishTurn(end);
      return;
    }
    // Words still coming: a batch STT is transcribing, or a streaming one has yet to confirm the last ones.
    const waitMs =
      this.words.length > 0 && this.unconfirmedPartial ? UNCONFIRMED_WORDS_WAIT_MS : LATE_FINAL_WAIT_MS;
    this.pending = { ...end, deadlineMs: this.nowMs + waitMs, holdUntilMs: null };
    if (!this.recognizing) return;
    this.sttFeed?.flush();
    this.stt?.flush();
  }

  private checkPending(): void {
    const pending = this.pending;
    if (!pending || this.resuming()) return;
    if (this.wordsComplete()) {
      this.settle(pending);
      return;
    }
    if (this.nowMs < pending.deadlineMs) return;
    if (this.words.length > 0) this.finishTurn(pending);
    else if (this.sttFailure) this.loseTurn(pending, this.sttFailure);
    else {
      this.resetTurn();
      this.lapsed = pending;
      this.listener.wordlessTurn(pending);
    }
  }

  /**
   * A pending turn whose words are in ends now, unless the turn-end policy holds them open ("and", "aur",
   * "umm", an incomplete clause): then it ends once the longer silence the endpointer would have asked for, had
   * it known the words, is over.
   */
  private settle(pending: PendingTurn): void {
    if (pending.holdUntilMs === null) {
      const required = requiredSilence(this.words.join(' '), this.settings.endpointingMs);
      const holdUntilMs = this.lastSpeechEndMs + required.ms;
      if (required.wait !== 'hold' || holdUntilMs <= this.nowMs) {
        this.finishTurn(pending);
        return;
      }
      const trailingWord = required.estimate.word;
      Object.assign(pending, {
        reason: 'continuation',
        requiredMs: required.ms,
        holdUntilMs,
        ...(trailingWord === undefined ? {} : { trailingWord }),
      });
    }
    if (pending.holdUntilMs !== null && this.nowMs >= pending.holdUntilMs) {
      this.finishTurn({ ...pending, atMs: this.nowMs, endpointMs: this.nowMs - this.lastSpeechEndMs });
    }
  }

  private finishTurn(decided: TurnEnd | PendingTurn): void {
    const turn = this.callerTurnOf(decided);
    this.resetTurn();
    // Without words, only speech heard while nothing could recognise it makes a turn (not a cough the STT
    // heard as nothing).
    if (!turn.recognized && (this.recognizing || !turn.spoke)) return;
    this.interruptions.callerTurnTaken();
    this.listener.callerTurn(turn.turn);
  }

  /** The turn as it stands: its words (if any) and times. Read before `resetTurn`. */
  private callerTurnOf(decided: TurnEnd | PendingTurn): {
    turn: CallerTurn;
    recognized: boolean;
    spoke: boolean;
  } {
    const text = this.words.join(' ').trim();
    const recognized = text !== '';
    const { type, reason, atMs, endpointMs, requiredMs, transcript, trailingWord } = decided;
    const speechEndMs = this.speechEndFor(atMs, endpointMs);
    const turn: CallerTurn = {
      type,
      reason,
      atMs,
      endpointMs,
      requiredMs,
      transcript,
      ...(trailingWord === undefined ? {} : { trailingWord }),
      text,
      recognized,
      speechStartMs: Math.min(this.turnSpeechStartMs ?? this.lastSpeechStartMs, speechEndMs),
      speechEndMs,
      // No words, no final: nothing was waited for beyond the silence.
      finalAtWallMs: recognized ? this.lastFinalWallMs : 0,
      decidedAtWallMs: this.wallNow(),
    };
    return { turn, recognized, spoke: this.spokeThisTurn };
  }

  /**
   * When the caller stopped speaking, for latency. The VAD's last speech end, unless the VAD still hears speech
   * (the STT committed first) or that end is older than this turn could be (the VAD missed this turn's speech):
   * then the decision time less the silence waited is the best estimate.
   */
  private speechEndFor(atMs: number, endpointMs: number): number {
    const estimate = atMs - endpointMs;
    const last = this.lastSpeechEndMs;
    if (this.speaking || !last || estimate - last > STALE_SPEECH_END_MS) return estimate;
    return last;
  }

  private loseTurn(end: TurnEnd, error: Error): void {
    const { turn } = this.callerTurnOf(end);
    this.resetTurn();
    this.listener.callerTurnLost(turn, error);
  }

  private resetTurn(): void {
    this.words = [];
    this.unconfirmedPartial = false;
    this.pending = null;
    this.lapsed = null;
    this.sttFailure = null;
    this.turnSpeechStartMs = null;
    this.spokeThisTurn = false;
  }

  private emitInterruptions(events: InterruptionEvent[]): void {
    for (const event of events) this.listener.interruption(event);
  }
}
