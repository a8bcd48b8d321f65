import type { AgentSettings, VoicemailAction } from '../core/agents/types.ts';
import type { CallLatency, TurnLatency } from '../core/store/call-latency.ts';
import { type OnCallTools, onCallToolsOf } from '../core/tools/on-call.ts';
import type { ToolRunOutcome } from '../core/tools/runner.ts';
import type { ChatMessage, LanguageModel } from '../engines/llm/types.ts';
import { UNRECOGNIZED_SPEECH } from '../engines/llm/unrecognized-speech.ts';
import { transcribesLanguage } from '../engines/stt/language.ts';
import type { SpeechToText, SttEvent, SttStream } from '../engines/stt/types.ts';
import type { VoiceActivityDetector } from '../engines/vad/types.ts';
import { type AgentTurn, type AgentTurnKind, AgentVoice } from './agent-voice.ts';
import { CallTime } from './call-time.ts';
import { type CallVariables, createDialog, type Dialog, type DialogAction } from './dialog/index.ts';
import { FailureCount, type FailureStage, fallbackLine } from './fallback.ts';
import { type LatencyAccount, LatencyLog } from './latency.ts';
import type { PlayoutSink } from './playout.ts';
import type { CallRecorder } from './recorder.ts';

import {
  generateReply,
  type ReplyAudioSink,
  type ReplyResult,
  type Speaker,
  type TurnKnowledge,
} from './reply.ts';

import { repromptLine, type SilenceAction, SilenceWatch, silenceGoodbyeLine } from './silence.ts';
import {
  addCallerMessage,
  conversationBasis,
  type DiscardReason,
  type EarlyReply,
  type SpeculationOutcome,
  SpeculativeReplies,
  withCallerMessage,
  worthStartingEarly,
} from './speculative-reply.ts';
import { ToolRuns } from './tool-runs.ts';
import { Transcript, type TranscriptTurn } from './transcript.ts';
import { lateWordsInterruption } from './turn/barge-in.ts';
import { type InterruptionEvent, interruptionSettings } from './turn/interruption.ts';
import { isOptOutRequest, optOutGoodbyeLine } from './turn/opt-out.ts';
import { type CallerTurn, LATE_FINAL_WAIT_MS, TurnTaking } from './turn/turn-taking.ts';
import { AnsweringMachine } from './voicemail/answering-machine.ts';
import { VOICEMAIL_WINDOW_MS, type VoicemailEvidence } from './voicemail/detector.ts';

/** Past the point where a wordless turn would have been given up on: late words still win over a re-answer. */
const OWED_ANSWER_MARGIN_MS = 500;
/**
 * Re-answers in a row with no caller words between them. A line where something keeps talking over the agent
 * without words (a television) would otherwise have it start over and over; after this it waits for the caller.
 */
const MAX_REANSWERS = 2;

/** Why a call's media ended, from the session's side. */
export type SessionEndReason =
  | 'assistant-ended-call'
  | 'customer-ended-call'
  | 'exceeded-max-duration'
  | 'voicemail'
  | 'pipeline-error'
  /** The caller stayed silent through the agent's re-prompts. */
  | 'silence-timed-out';

/** Everything the call log records: decisions with their reasons, so behaviour can be tuned afterwards. */
export type SessionEvent =
  | { type: 'agent_turn'; turnId: string; text: string; atMs: number }
  /** `recognized` false: the caller spoke but no words were recognised (`text` is empty). */
  | {
      type: 'caller_turn';
      text: string;
      recognized: boolean;
      atMs: number;
      reason: string;
      endpointMs: number;
    }
  /** From here on the caller's turns are taken by voice activity alone, without words; `reason` says why. */
  | { type: 'turn_taking_by_voice'; atMs: number; reason: string }
  /** `turnId`: the agent turn the caller spoke over, if one was playing. */
  | { type: 'interruption'; turnId?: string; event: InterruptionEvent }
  | { type: 'transition'; from: string; to: string; label: string; extracted: Record<string, unknown> }
  /** A reply cut off by caller speech that turned out to have no words is answered again. */
  | { type: 'reanswer'; turnId: string; atMs: number; reason: 'wordless_interruption' }
  /** The caller was silent for `silentMs`: the agent checks on them (`reprompt`) or hangs up (`end`). */
  | { type: 'silence'; atMs: number; silentMs: number; action: SilenceAction }
  /** The caller asked not to be called again (`behavior.dnc_on_opt_out`): the agent acknowledges and hangs up. */
  | { type: 'opt_out'; atMs: number }
  | { type: 'transcript'; final: boolean; text: string }
  /** `recognized` false: the turn answered had no words (no STT final to wait for). */
  | { type: 'latency'; turnId: string; latency: TurnLatency; recognized: boolean }
  | { type: 'error'; stage: FailureStage; message: string; turnId?: string }
  /** An on_call tool run ended (or was refused: its arguments did not conform). No bodies, no secrets. */
  | { type: 'tool_call'; atMs: number; outcome: Omit<ToolRunOutcome, 'response'> }
  | { type: 'voicemail_detected'; atMs: number; action: VoicemailAction; evidence: VoicemailEvidence[] };

export interface SessionOutcome {
  reason: SessionEndReason;
  transcript: readonly TranscriptTurn[];
  latency: CallLatency | null;
  extracted: Readonly<Record<string, unknown>>;
  /** Call time when media ended, ms. */
  durationMs: number;
}

export interface SessionEngines {
  llm: LanguageModel;
  /**
   * Undefined when no STT runs on this node. Calls in a language it does not transcribe (or without one) take
   * the caller's turns by voice activity alone and keep them as unrecognised speech.
   */
  stt?: SpeechToText | undefined;
  vad: VoiceActivityDetector;
  speaker: Speaker;
}

export interface SessionOutput extends PlayoutSink {
  /** Ends the media (the carrier hangs up). */
  end(reason: string): void;
}

export interface SessionOptions {
  agent: AgentSettings;
  variables: CallVariables;
  engines: SessionEngines;
  output: SessionOutput;
  recorder?: CallRecorder;
  /**
   * Answering machine detection over the first `windowMs` of media (default `VOICEMAIL_WINDOW_MS`); `false`
   * turns it off (inbound calls: whoever calls in is not a machine's greeting).
   */
  voicemail?: { windowMs: number } | false;
  wallNow?: () => number;
  /**
   * Runs the agent's on_call tools for this call. Without it, or with a dialog engine that cannot choose tools
   * (`capabilities.choosesTools`), they are not offered to the model.
   */
  tools?: OnCallTools;
  /** Knowledge base passages given to the model with each caller turn (see TurnKnowledge). */
  knowledge?: TurnKnowledge;
  onEvent?: (event: SessionEvent) => void;
  /**
   * Each turn's latency; `account` has the terms the overhead leaves out, for checking it (benchmarks);
   * `recognized` whether the turn answered had words.
   */
  onLatency?: (latency: TurnLatency, account: LatencyAccount, turn: { recognized: boolean }) => void;
  /**
   * Each reply started before the caller's turn was confirmed (`behavior.speculative_replies`): `started`, then
   * `used` or `discarded` (with why). A discarded one cost a model request (and maybe a first clause's speech).
   */
  onSpeculation?: (outcome: SpeculationOutcome, reason?: DiscardReason) => void;
}

/**
 * One call's conversation: listens (TurnTaking), answers (generateReply), speaks (AgentVoice), and handles the
 * caller talking over the agent, answering machines and engine failures. The media layer feeds it frames and
 * playback acks; it ends the call when the dialog says so, on voicemail, when engines keep failing, or at the
 * duration limit.
 */
export class CallSession {
  private readonly time: CallTime;
  private readonly voice: AgentVoice;
  private readonly listening: TurnTaking;
  private readonly dialog: Dialog;
  private readonly transcript = new Transcript();
  private readonly history: ChatMessage[] = [];
  private readonly latency: LatencyLog;
  private readonly failures = new FailureCount();
  private readonly controller = new AbortController();
  private readonly machine: AnsweringMachine | null;
  private readonly tools: ToolRuns | undefined;
  private readonly early: SpeculativeReplies;
  private ending: SessionEndReason | null = null;
  private muted = false;
  /**
   * The reply interrupted by caller speech that had no words yet (a batch STT, a long cough): if no words come
   * for that speech, the caller is still owed the answer.
   */
  private cutByWordlessSpeech: { turnId: string; atMs: number } | null = null;
  private reanswers = 0;
  private readonly silence = new SilenceWatch();
  /** How the call ends once the closing line has played. */
  private closingReason: SessionEndReason = 'assistant-ended-call';
  /** Why the call takes turns by voice activity alone from the start; null when an STT serves its language. */
  private readonly wordless: string | null;
  private outcome: ((o: SessionOutcome) => void) | undefined;
  readonly finished: Promise<SessionOutcome>;

  constructor(private readonly options: SessionOptions) {
    const wallNow = options.wallNow ?? (() => performance.now());
    const { agent, engines } = options;
    this.time = new CallTime(wallNow);
    this.latency = new LatencyLog(this.time, options.onLatency);
    const offered = options.tools && engines.llm.capabilities.choosesTools ? onCallToolsOf(agent) : [];
    this.tools =
      options.tools && offered.length > 0
        ? new ToolRuns(options.tools, this.controller.signal, (outcome) => this.onToolRun(outcome))
        : undefined;
    this.dialog = createDialog(agent, options.variables, offered);
    const detection = options.voicemail ?? { windowMs: VOICEMAIL_WINDOW_MS };
    this.machine = detection
      ? new AnsweringMachine(detection, agent, options.variables, {
          detected: (evidence, action) => this.onVoicemail(evidence, action),
          leaveMessage: (message) =>
            message ? void this.speakLine('voicemail', message) : this.end('voicemail'),
        })
      : null;
    this.wordless = !engines.stt
      ? 'no speech-to-text engine runs on this node'
      : transcribesLanguage(engines.stt.languages, agent.language)
        ? null
        : `the ${engines.stt.provider} speech-to-text does not transcribe ${agent.language}`;
    const stt: SttStream | null =
      engines.stt && this.wordless === null
        ? engines.stt.stream({ language: agent.language, signal: this.controller.signal })
        : null;
    this.listening = new TurnTaking(
      engines.vad,
      stt,
      {
        endpointingMs: agent.behavior.endpointing_ms,
        interruptions: interruptionSettings(agent.behavior),
        batchStt: engines.stt ? !engines.stt.capabilities.streaming : false,
      },
      {
        callerTurn: (turn) => this.onCallerTurn(turn),
        callerTurnLost: (turn, error) => this.onCallerTurnLost(turn, error),
        wordlessTurn: () => this.onWordlessTurn(),
        interruption: (event) => this.onInterruption(event),
        transcript: (event) => this.onTranscript(event),
        sttError: (error) => this.emit({ type: 'error', stage: 'stt', message: error.message }),
        recognitionLost: (error) => this.onRecognitionLost(error),
        deaf: (error) => this.onDeaf(error),
        earlyWords: (text) => this.onEarlyWords(text),
      },
      wallNow,
    );
    this.early = new SpeculativeReplies(
      (text, hooks) => this.startReply('early', hooks.signal, hooks.sink, { ...hooks, text }),
      wallNow,
      options.onSpeculation,
    );
    this.voice = new AgentVoice({
      output: options.output,
      recorder: options.recorder,
      time: this.time,
      history: this.history,
      transcript: this.transcript,
      listening: this.listening,
    });
    this.finished = new Promise((resolve) => {
      this.outcome = resolve;
    });
  }

  /** Media is live: the agent opens with its first line. */
  start(): void {
    if (this.wordless) this.emit({ type: 'turn_taking_by_voice', atMs: 0, reason: this.wordless });
    const opening = this.dialog.opening();
    if (opening) void this.speakLine('opening', opening);
  }

  /** One 20 ms caller frame (PCM16 16 kHz). */
  audio(frame: Int16Array): void {
    if (this.ending) return;
    this.options.recorder?.caller(frame);
    const audioMs = this.time.frameArrived();
    this.listening.frame(frame, audioMs);
    this.machine?.frame(frame, audioMs, this.listening);
    if (this.cutByWordlessSpeech) this.checkOwedAnswer(audioMs);
    this.checkSilence(audioMs);
    const maxMs = this.options.agent.max_duration_secs * 1000;
    if (audioMs >= maxMs && !this.ending) this.end('exceeded-max-duration');
  }

  playbackAck(name: string, dropped: boolean): void {
    if (!dropped) this.voice.playbackAck(name);
  }

  /** The media ended (carrier hang-up, or after `end`). */
  stopped(): void {
    this.ending ??= 'customer-ended-call';
    this.finish();
  }

  /** Live control: the agent says `text` now, in place of whatever it was saying or preparing. */
  say(text: string): void {
    if (this.ending) return;
    if (this.voice.current) this.voice.stop(true);
    void this.speakLine('said', text);
  }

  /** Live control: muted, the agent listens and keeps the transcript but does not speak; it stops at once. */
  setMuted(muted: boolean): void {
    this.muted = muted;
    if (muted) this.early.withdraw('stopped');
    if (muted && this.voice.current) this.voice.stop(true);
  }

  /** Live control: a message for the model, seen from its next reply on. */
  addMessage(message: { role: 'system' | 'user' | 'assistant'; content: string }): void {
    if (!this.ending) this.history.push({ role: message.role, content: message.content });
  }

  /** Live control: say `message` (when given, and not muted), then hang up. */
  hangUp(message?: string): void {
    if (this.ending) return;
    if (!message || this.muted) {
      this.end('assistant-ended-call');
      return;
    }
    if (this.voice.current) this.voice.stop(true);
    this.closingReason = 'assistant-ended-call';
    void this.speakLine('closing', message);
  }

  /** Ends the call from our side. */
  end(reason: SessionEndReason): void {
    if (this.ending) return;
    this.ending = reason;
    this.voice.current?.controller.abort();
    this.options.output.end(reason);
    this.finish();
  }

  private finish(): void {
    if (!this.outcome) return;
    this.early.withdraw('stopped');
    this.controller.abort();
    this.voice.current?.controller.abort();
    this.machine?.stop();
    this.listening.close();
    this.options.recorder?.finish();
    const resolve = this.outcome;
    this.outcome = undefined;
    resolve({
      reason: this.ending ?? 'customer-ended-call',
      transcript: this.transcript.turns(),
      latency: this.latency.summary(),
      extracted: this.dialog.extracted(),
      durationMs: this.time.audioMs,
    });
  }

  private onTranscript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void {
    this.emit({ type: 'transcript', final: event.type === 'final', text: event.text });
    if (event.type === 'final') this.machine?.transcript(event.text, this.time.audioMs);
  }

  private onCallerTurn(turn: CallerTurn): void {
    // A machine's greeting is not a turn to answer.
    if (this.ending || this.machine?.detected) return;
    this.cutByWordlessSpeech = null;
    this.reanswers = 0;
    const playing = this.voice.playing;
    if (playing) {
      // Words too late for the interruption policy; backchannels and uninterruptible replies are not turns.
      const event = lateWordsInterruption(
        turn.text,
        turn.atMs,
        this.options.agent.behavior,
        playing.interruptible,
      );
      if (!event) return;
      this.emit({ type: 'interruption', turnId: playing.id, event });
      this.voice.stop(true);
    }
    this.emit({
      type: 'caller_turn',
      text: turn.text,
      recognized: turn.recognized,
      atMs: turn.atMs,
      reason: turn.reason,
      endpointMs: turn.endpointMs,
    });
    this.keepCallerTurn(turn);
    // A reply still being prepared for the previous words is replaced: the caller said more.
    if (this.voice.current && this.voice.current.kind !== 'closing') this.voice.stop(false);
    addCallerMessage(this.history, turn.recognized ? turn.text : UNRECOGNIZED_SPEECH);
    // A reply started early on these words, in this conversation, is this turn's answer.
    const started = turn.recognized
      ? this.early.claim(turn.text, conversationBasis(this.history, this.dialog.currentNode()))
      : null;
    if (!turn.recognized) this.early.withdraw('turn_differs');
    if (turn.recognized && this.options.agent.behavior.dnc_on_opt_out && isOptOutRequest(turn.text)) {
      started?.discard('stopped');
      this.optOut(turn.atMs);
      return;
    }
    if (!this.muted && !this.voice.current) void this.runReply(turn, started);
    else started?.discard('stopped');
  }

  /**
   * The caller stopped after `text` and the turn is undecided: the reply starts now (held back until the turn
   * is confirmed with the same words). Null: the caller went on.
   */
  private onEarlyWords(text: string | null): void {
    if (text === null) {
      this.early.withdraw('caller_resumed');
      return;
    }
    const { behavior } = this.options.agent;
    if (!behavior.speculative_replies || !worthStartingEarly(text, behavior.endpointing_ms)) return;
    // Only when the reply would start at once: nothing else under way, and nothing the reply must wait for.
    if (this.ending || this.muted || this.machine?.detected || this.voice.current) return;
    if (this.cutByWordlessSpeech || this.tools?.busy) return;
    if (behavior.dnc_on_opt_out && isOptOutRequest(text)) return;
    const conversation = withCallerMessage(this.history, text);
    this.early.offer(text, conversationBasis(conversation, this.dialog.currentNode()));
  }

  /** The caller asked not to be called again: acknowledged in one line, then the call ends. */
  private optOut(atMs: number): void {
    if (this.voice.current?.kind === 'closing') return;
    this.emit({ type: 'opt_out', atMs });
    this.closingReason = 'assistant-ended-call';
    void this.speakLine('closing', optOutGoodbyeLine(this.options.agent.voice.language));
  }

  private keepCallerTurn(turn: CallerTurn): void {
    this.transcript.add({
      speaker: 'caller',
      text: turn.text,
      recognized: turn.recognized,
      startMs: turn.speechStartMs,
      endMs: turn.speechEndMs,
      interrupted: false,
    });
  }

  /**
   * The caller spoke but the STT failed: the turn is kept as unrecognised speech, and the agent asks again.
   * When the STT keeps failing, the call stops asking it: turns go on by voice activity alone, this one first.
   */
  private onCallerTurnLost(turn: CallerTurn, error: Error): void {
    if (this.ending || this.machine?.detected) return;
    if (this.failures.failed()) {
      this.listening.stopRecognition(error);
      this.onCallerTurn(turn);
      return;
    }
    this.keepCallerTurn(turn);
    if (!this.voice.current)
      void this.speakLine('fallback', fallbackLine('stt', this.options.agent.voice.language));
  }

  /** The STT is gone for the rest of the call; the call goes on, by voice activity. */
  private onRecognitionLost(error: Error): void {
    if (this.ending) return;
    this.emit({ type: 'error', stage: 'stt', message: error.message });
    this.emit({
      type: 'turn_taking_by_voice',
      atMs: this.time.audioMs,
      reason: `the speech-to-text failed: ${error.message}`,
    });
  }

  /** Neither words nor voice activity: nothing can hear the caller, so the call cannot go on. */
  private onDeaf(error: Error): void {
    if (this.ending) return;
    this.emit({ type: 'error', stage: 'stt', message: `voice activity detection failed: ${error.message}` });
    this.end('pipeline-error');
  }

  /**
   * Caller speech ended without words. When it had cut off a reply, the caller heard no answer and will wait
   * for one (a person would say "hello?", a machine or a quiet line will not): the agent answers again, from
   * the conversation as it stands, which keeps what was heard of the cut reply.
   */
  private onWordlessTurn(): void {
    if (this.cutByWordlessSpeech) this.answerAgain();
  }

  /**
   * The speech that cut the reply off may never make a turn of its own (the VAD closed it late, after the turn
   * it belonged to was taken): once the caller has been quiet for as long as a wordless turn takes to be
   * given up on, the answer is owed all the same.
   */
  private checkOwedAnswer(audioMs: number): void {
    const cut = this.cutByWordlessSpeech;
    if (!cut || this.listening.callerSpeaking) return;
    const quietSinceMs = Math.max(cut.atMs, this.listening.quietSinceMs);
    const waitMs = this.options.agent.behavior.endpointing_ms + LATE_FINAL_WAIT_MS + OWED_ANSWER_MARGIN_MS;
    if (audioMs - quietSinceMs >= waitMs) this.answerAgain();
  }

  /**
   * The caller's silence, counted only while nobody speaks and the agent has nothing under way (a reply being
   * prepared is an answer on its way). Muted, the agent says nothing, so it does not re-prompt either.
   */
  private checkSilence(audioMs: number): void {
    if (this.ending || this.machine?.detected) return;
    if (this.listening.callerSpeaking) {
      this.silence.callerSpeaking(audioMs);
      return;
    }
    if (this.muted || this.voice.current || this.cutByWordlessSpeech) return;
    const settings = this.dialog.silence();
    const quietSinceMs = this.listening.quietSinceMs;
    const due = this.silence.due(audioMs, settings, quietSinceMs);
    if (!due) return;
    const silentMs = settings.repromptMs;
    this.emit({ type: 'silence', atMs: audioMs, silentMs, action: due });
    const language = this.options.agent.voice.language;
    if (due === 'reprompt') {
      void this.speakLine('reprompt', repromptLine(settings, language));
      return;
    }
    this.closingReason = 'silence-timed-out';
    void this.speakLine('closing', silenceGoodbyeLine(language));
  }

  private answerAgain(): void {
    const cut = this.cutByWordlessSpeech;
    this.cutByWordlessSpeech = null;
    if (!cut || this.ending || this.machine?.detected || this.muted || this.voice.current) return;
    if (this.reanswers >= MAX_REANSWERS) return;
    this.reanswers++;
    const atMs = this.time.audioMs;
    this.emit({ type: 'reanswer', turnId: cut.turnId, atMs, reason: 'wordless_interruption' });
    void this.runReply(null);
  }

  private onInterruption(event: InterruptionEvent): void {
    const playing = this.voice.playing;
    this.emit({ type: 'interruption', ...(playing ? { turnId: playing.id } : {}), event });
    if (!playing || this.machine?.detected) return;
    // The agent talks on through `heard` (a backchannel must leave no hole in its voice); only `interrupted`
    // stops it.
    if (event.type === 'interrupted') {
      this.voice.stop(true);
      const wordless = event.evidence.words.length === 0 && playing.kind === 'reply';
      this.cutByWordlessSpeech = wordless ? { turnId: playing.id, atMs: event.atMs } : null;
    }
  }

  private onVoicemail(evidence: VoicemailEvidence[], action: VoicemailAction): void {
    if (this.ending) return;
    this.emit({ type: 'voicemail_detected', atMs: this.time.audioMs, action, evidence });
    // Whatever the agent was saying, or was about to, the machine was not listening.
    this.early.withdraw('stopped');
    this.voice.stop(true);
    if (action === 'hangup') this.end('voicemail');
  }

  /**
   * `caller`: the turn answered, for its latency; null when answering again (no new words to time). `early`: a
   * reply already started for the turn's words, which this turn adopts.
   */
  private async runReply(caller: CallerTurn | null, early: EarlyReply | null = null): Promise<void> {
    if (!early) this.early.withdraw('conversation_changed');
    const turn = this.voice.begin('reply', {
      interruptible: this.dialog.turnContext().allowInterrupt,
      node: this.dialog.currentNode(),
    });
    const sink = this.voice.sink(turn);
    const signal = turn.controller.signal;
    const result = early
      ? await early.adopt(turn.id, sink, signal)
      : await this.startReply(turn.id, signal, sink);
    if (turn.controller.signal.aborted) return;
    const latency = result.failure || !caller ? null : this.latency.record(caller, result.timings);
    if (latency && caller)
      this.emit({ type: 'latency', turnId: turn.id, latency, recognized: caller.recognized });
    await this.completeTurn(turn, result.failure, result.endCall !== undefined);
  }

  /** A reply's model and speech; `speculative` when it starts before the caller's turn is confirmed. */
  private startReply(
    turnId: string,
    signal: AbortSignal,
    sink: ReplyAudioSink,
    speculative?: { text: string; confirmed: Promise<boolean> },
  ): Promise<ReplyResult> {
    const { agent, engines } = this.options;
    return generateReply({
      turnId,
      signal,
      history: this.history,
      dialog: this.dialog,
      llm: engines.llm,
      speaker: engines.speaker,
      voice: { voiceId: agent.voice.voice_id, language: agent.voice.language },
      sink,
      wallNow: () => this.time.wallNow(),
      onAction: (action) => this.onAction(action),
      ...(this.tools ? { tools: this.tools } : {}),
      ...(this.options.knowledge ? { knowledge: this.options.knowledge } : {}),
      ...(speculative
        ? {
            speculative: {
              conversation: withCallerMessage(this.history, speculative.text),
              confirmed: speculative.confirmed,
            },
          }
        : {}),
    });
  }

  /** Speaks a fixed line as its own turn: the opening, a fallback line, the voicemail message. */
  private async speakLine(kind: Exclude<AgentTurnKind, 'reply'>, text: string): Promise<void> {
    this.early.withdraw('stopped');
    const turn = this.voice.begin(kind, {
      interruptible: kind !== 'voicemail' && kind !== 'closing' && this.dialog.turnContext().allowInterrupt,
      node: this.dialog.currentNode(),
    });
    const { agent, engines } = this.options;
    let failure: { stage: FailureStage; error: Error } | undefined;
    try {
      await this.voice.say(turn, text, engines.speaker, {
        voiceId: agent.voice.voice_id,
        language: agent.voice.language,
      });
    } catch (error) {
      failure = { stage: 'tts', error: error instanceof Error ? error : new Error(String(error)) };
    }
    if (turn.controller.signal.aborted) return;
    await this.completeTurn(turn, failure, false);
  }

  /** After a turn's audio has played: log it, then hang up, go on, or recover from an engine failure. */
  private async completeTurn(
    turn: AgentTurn,
    failure: { stage: FailureStage; error: Error } | undefined,
    endCall: boolean,
  ): Promise<void> {
    if (failure)
      this.emit({ type: 'error', stage: failure.stage, message: failure.error.message, turnId: turn.id });
    const heard = await this.voice.finish(turn, failure !== undefined);
    if (!heard || this.ending) return;
    this.silence.agentDone(this.time.audioMs);
    if (heard.text)
      this.emit({ type: 'agent_turn', turnId: turn.id, text: heard.text, atMs: this.time.audioMs });
    if (turn.kind === 'voicemail') return this.end('voicemail');
    if (turn.kind === 'closing') return this.end(this.closingReason);
    if (endCall) return this.end('assistant-ended-call');
    if (!failure) {
      if (turn.kind !== 'fallback') this.failures.succeeded();
      return;
    }
    // A fallback line that could not be spoken is not retried.
    if (turn.kind === 'fallback') return;
    if (this.failures.failed()) return this.end('pipeline-error');
    void this.speakLine('fallback', fallbackLine(failure.stage, this.options.agent.voice.language));
  }

  private onAction(action: DialogAction): void {
    if (action.type !== 'transition') return;
    const { from, to, label, extracted } = action;
    this.emit({ type: 'transition', from, to, label, extracted });
  }

  private onToolRun(outcome: ToolRunOutcome): void {
    const { response: _, ...kept } = outcome;
    this.emit({ type: 'tool_call', atMs: this.time.audioMs, outcome: kept });
  }

  private emit(event: SessionEvent): void {
    this.options.onEvent?.(event);
  }
}
