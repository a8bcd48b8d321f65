import type { SttEvent, SttStream } from '../engines/stt/types.ts';
import { SpeechSegmenter } from '../engines/vad/segmenter.ts';
import type { VadStream, VoiceActivityDetector } from '../engines/vad/types.ts';
import { Endpointer, type TurnEnd } from './turn/endpointing.ts';
import {
  type InterruptionEvent,
  InterruptionPolicy,
  type InterruptionSettings,
} from './turn/interruption.ts';

/**
 * A batch STT transcribes after the caller stops, so its final can arrive after the endpointer declared the
 * turn over. This long the turn waits for those words before it is dropped as speech without words (a cough).
 */
export const LATE_FINAL_WAIT_MS = 2500;

export interface CallerTurn extends TurnEnd {
  /** What the caller said this turn. */
  text: string;
  /** Call time (ms of audio) at which the caller stopped speaking. */
  speechEndMs: number;
  /** Wall time at which the final transcript was in hand. */
  finalAtWallMs: number;
}

export interface TurnTakingListener {
  callerTurn(turn: CallerTurn): void;
  interruption(event: InterruptionEvent): void;
  transcript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void;
  sttError(error: Error): void;
}

/**
 * Listens to the caller: every inbound frame goes to the VAD and the STT; speech segments and transcripts drive
 * the endpointer (when the caller's turn is over) and the interruption policy (what caller speech does while the
 * agent talks). Time is call time, ms of caller audio.
 */
export class TurnTaking {
  private readonly vad: VadStream;
  private readonly segmenter: SpeechSegmenter;
  private readonly endpointer: Endpointer;
  readonly interruptions: InterruptionPolicy;
  private vadWork: Promise<void> = Promise.resolve();
  private nowMs = 0;
  private lastSpeechEndMs = 0;
  /** Finals since the last caller turn ended. */
  private words: string[] = [];
  private lastFinalWallMs = 0;
  private waitingForWords: (TurnEnd & { deadlineMs: number }) | null = null;
  private closed = false;

  constructor(
    detector: VoiceActivityDetector,
    private readonly stt: SttStream,
    settings: { endpointingMs: number; interruptions: InterruptionSettings },
    private readonly listener: TurnTakingListener,
    private readonly wallNow: () => number,
  ) {
    this.vad = detector.createStream();
    this.segmenter = SpeechSegmenter.for(detector);
    this.endpointer = new Endpointer({ endpointingMs: settings.endpointingMs });
    this.interruptions = new InterruptionPolicy(settings.interruptions);
    void this.readTranscripts();
  }

  /** One inbound frame; `audioMs` is the call time at its end. */
  frame(frame: Int16Array, audioMs: number): void {
    if (this.closed) return;
    this.nowMs = audioMs;
    this.stt.push(frame);
    const pushed = this.vad.push(frame);
    this.vadWork = this.vadWork.then(async () => {
      const probabilities = await pushed;
      if (this.closed) return;
      for (const event of this.segmenter.pushAll(probabilities)) {
        if (event.type === 'speech_end') this.lastSpeechEndMs = event.atMs;
        this.emitInterruptions(this.interruptions.onVad(event));
        this.onTurnEnd(this.endpointer.onVad(event));
      }
    });
    this.emitInterruptions(this.interruptions.tick(audioMs));
    this.onTurnEnd(this.endpointer.tick(audioMs));
    if (this.waitingForWords && audioMs >= this.waitingForWords.deadlineMs) this.waitingForWords = null;
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
    this.stt.end().catch(() => undefined);
  }

  private async readTranscripts(): Promise<void> {
    try {
      for await (const event of this.stt) {
        if (this.closed) break;
        if (event.type === 'error') {
          this.listener.sttError(event.error);
          continue;
        }
        if (event.type !== 'partial' && event.type !== 'final') continue;
        this.listener.transcript(event);
        const wall = this.wallNow();
        if (event.type === 'final' && event.text.trim()) {
          this.words.push(event.text.trim());
          this.lastFinalWallMs = wall;
        }
        this.emitInterruptions(this.interruptions.onTranscript(event, this.nowMs));
        this.onTurnEnd(this.endpointer.onTranscript(event, this.nowMs));
        if (event.type === 'final' && this.waitingForWords && event.text.trim()) {
          const pending = this.waitingForWords;
          this.waitingForWords = null;
          this.finishTurn(pending);
        }
      }
    } catch (error) {
      if (!this.closed) this.listener.sttError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onTurnEnd(end: TurnEnd | null | undefined): void {
    if (!end) return;
    if (this.words.length === 0) {
      // No words yet: a batch STT is still transcribing. Wait for them, a little.
      this.waitingForWords = { ...end, deadlineMs: this.nowMs + LATE_FINAL_WAIT_MS };
      this.stt.flush();
      return;
    }
    this.finishTurn(end);
  }

  private finishTurn(end: TurnEnd): void {
    const text = this.words.join(' ').trim();
    this.words = [];
    if (!text) return;
    this.listener.callerTurn({
      ...end,
      text,
      speechEndMs: this.lastSpeechEndMs || end.atMs - end.endpointMs,
      finalAtWallMs: this.lastFinalWallMs,
    });
  }

  private emitInterruptions(events: InterruptionEvent[]): void {
    for (const event of events) this.listener.interruption(event);
  }
}
