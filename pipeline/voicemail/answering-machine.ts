import type { AgentSettings, VoicemailAction } from '../../core/agents/types.ts';
import { type CallVariables, substitute } from '../dialog/index.ts';
import {
  messageMayStart,
  VoicemailDetector,
  type VoicemailEvidence,
  type VoicemailSignal,
} from './detector.ts';

export interface AnsweringMachineHooks {
  /** A machine answered: the agent stops talking; with `hangup`, the call ends. */
  detected(evidence: VoicemailEvidence[], action: VoicemailAction): void;
  /** The machine records now: speak the message ('' for none), then end the call. */
  leaveMessage(message: string): void;
}

/** What the caller side is doing, from the VAD: a message waits for the greeting to go quiet. */
export interface CallerActivity {
  readonly callerSpeaking: boolean;
  readonly quietSinceMs: number;
}

/**
 * The session's side of answering machines: feeds the detector (detector.ts) with frames and transcripts and,
 * once a machine is found, applies the agent's `voicemail.action`: hang up at once, or wait for the beep (or the
 * greeting's end) and leave `voicemail.message`, its variables filled (the first message when it has none).
 */
export class AnsweringMachine {
  private readonly detector: VoicemailDetector;
  private leaving: { detectedAtMs: number; started: boolean } | null = null;

  constructor(
    options: { windowMs: number },
    private readonly agent: Pick<AgentSettings, 'voicemail' | 'first_message'>,
    private readonly variables: CallVariables,
    private readonly hooks: AnsweringMachineHooks,
  ) {
    this.detector = new VoicemailDetector(options);
  }

  /** A machine answered: the caller side's speech is its greeting, not turns to answer. */
  get detected(): boolean {
    return this.detector.detected;
  }

  frame(frame: Int16Array, atMs: number, caller: CallerActivity): void {
    this.apply(this.detector.frame(frame, atMs), atMs);
    const leaving = this.leaving;
    if (!leaving || leaving.started) return;
    const moment = {
      nowMs: atMs,
      detectedAtMs: leaving.detectedAtMs,
      beeping: this.detector.beeping,
      lastBeepEndMs: this.detector.lastBeepEndMs,
      speaking: caller.callerSpeaking,
      quietSinceMs: Math.max(caller.quietSinceMs, leaving.detectedAtMs),
    };
    if (!messageMayStart(moment)) return;
    leaving.started = true;
    this.detector.stop();
    this.hooks.leaveMessage(
      substitute(this.agent.voicemail.message ?? this.agent.first_message, this.variables),
    );
  }

  /** A final transcript of the caller side's words. */
  transcript(text: string, atMs: number): void {
    this.apply(this.detector.transcript(text, atMs), atMs);
  }

  stop(): void {
    this.detector.stop();
  }

  private apply(signals: VoicemailSignal[], atMs: number): void {
    if (!signals.some((s) => s.type === 'detected')) return;
    const action = this.agent.voicemail.action;
    if (action === 'hangup') this.detector.stop();
    else this.leaving = { detectedAtMs: atMs, started: false };
    this.hooks.detected([...this.detector.evidence], action);
  }
}
