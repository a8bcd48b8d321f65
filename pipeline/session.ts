import type { AgentSettings } from '../core/agents/types.ts';
import type { ChatMessage, LanguageModel } from '../engines/llm/types.ts';
import type { SpeechToText, SttEvent } from '../engines/stt/types.ts';
import type { VoiceActivityDetector } from '../engines/vad/types.ts';
import { CallTime } from './call-time.ts';
import { type CallVariables, createDialog, type Dialog } from './dialog/index.ts';
import type { LatencySummary, TurnLatency } from './metrics.ts';
import { summarizeLatency } from './metrics.ts';
import { DEFAULT_PLAYOUT, Playout, type PlayoutSink } from './playout.ts';
import type { CallRecorder } from './recorder.ts';
import { generateReply, type ReplyResult, type Speaker } from './reply.ts';
import { Transcript, type TranscriptTurn } from './transcript.ts';
import { type InterruptionEvent, interruptionSettings } from './turn/interruption.ts';
import { findStopPhrase, isBackchannel, normalizeWords } from './turn/lexicon.ts';
import { type CallerTurn, TurnTaking } from './turn-taking.ts';

/** Why a call's media ended, from the session's side. */
export type SessionEndReason =
  | 'assistant-ended-call'
  | 'customer-ended-call'
  | 'exceeded-max-duration'
  | 'pipeline-error';

/** Everything the call log records: decisions with their reasons, so behaviour can be tuned afterwards. */
export type SessionEvent =
  | { type: 'agent_turn'; turnId: string; text: string; atMs: number }
  | { type: 'caller_turn'; text: string; atMs: number; reason: string; endpointMs: number }
  | { type: 'interruption'; event: InterruptionEvent }
  | { type: 'transition'; from: string; to: string; label: string; extracted: Record<string, unknown> }
  | { type: 'transcript'; final: boolean; text: string }
  | { type: 'latency'; turnId: string; latency: TurnLatency }
  | { type: 'error'; stage: 'stt' | 'llm' | 'tts'; message: string };

export interface SessionOutcome {
  reason: SessionEndReason;
  transcript: readonly TranscriptTurn[];
  latency: LatencySummary | null;
  extracted: Readonly<Record<string, unknown>>;
  /** Call time when media ended, ms. */
  durationMs: number;
}

export interface SessionEngines {
  llm: LanguageModel;
  stt: SpeechToText;
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
  wallNow?: () => number;
  onEvent?: (event: SessionEvent) => void;
  onLatency?: (latency: TurnLatency) => void;
}

/**
 * One call's conversation: listens (TurnTaking), answers (generateReply), speaks (Playout), and handles the
 * caller talking over the agent. The media layer feeds it frames and playback acks; it ends the call when the
 * dialog says so or the duration limit is reached. Each agent reply is a turn with its own AbortController;
 * audio of an aborted turn never reaches the carrier.
 */
export class CallSession {
  private readonly time: CallTime;
  private readonly playout: Playout;
  private readonly listening: TurnTaking;
  private readonly dialog: Dialog;
  private readonly transcript = new Transcript();
  private readonly history: ChatMessage[] = [];
  private readonly latencies: TurnLatency[] = [];
  private readonly controller = new AbortController();
  private turnSeq = 0;
  private reply: {
    id: string;
    controller: AbortController;
    startedAtMs: number;
    playingSinceMs: number | null;
  } | null = null;
  private ending: SessionEndReason | null = null;
  private outcome: ((o: SessionOutcome) => void) | undefined;
  readonly finished: Promise<SessionOutcome>;

  constructor(private readonly options: SessionOptions) {
    const wallNow = options.wallNow ?? (() => performance.now());
    this.time = new CallTime(wallNow);
    this.dialog = createDialog(options.agent, options.variables);
    this.playout = new Playout(
      {
        sendAudio: (pcm) => {
          options.recorder?.agent(pcm);
          options.output.sendAudio(pcm);
        },
        sendMark: (name) => options.output.sendMark(name),
        clear: () => options.output.clear(),
      },
      DEFAULT_PLAYOUT,
    );
    const stt = options.engines.stt.stream({
      language: options.agent.language,
      signal: this.controller.signal,
    });
    this.listening = new TurnTaking(
      options.engines.vad,
      stt,
      {
        endpointingMs: options.agent.behavior.endpointing_ms,
        interruptions: interruptionSettings(options.agent.behavior),
      },
      {
        callerTurn: (turn) => this.onCallerTurn(turn),
        interruption: (event) => this.onInterruption(event),
        transcript: (event) => this.onTranscript(event),
        sttError: (error) => this.emit({ type: 'error', stage: 'stt', message: error.message }),
      },
      wallNow,
    );
    this.finished = new Promise((resolve) => {
      this.outcome = resolve;
    });
  }

  /** Media is live: the agent opens with its first line. */
  start(): void {
    const opening = this.dialog.opening();
    if (opening) void this.runTurn({ opening });
  }

  /** One 20 ms caller frame (PCM16 16 kHz). */
  audio(frame: Int16Array): void {
    if (this.ending && this.ending !== 'assistant-ended-call') return;
    this.options.recorder?.caller(frame);
    const audioMs = this.time.frameArrived();
    this.listening.frame(frame, audioMs);
    const maxMs = this.options.agent.max_duration_secs * 1000;
    if (audioMs >= maxMs && !this.ending) this.end('exceeded-max-duration');
  }

  playbackAck(name: string, dropped: boolean): void {
    if (dropped) return;
    this.playout.onPlaybackAck(name);
  }

  /** The media ended (carrier hang-up, or after `end`). */
  stopped(): void {
    if (!this.ending) this.ending = 'customer-ended-call';
    this.finish();
  }

  /** Ends the call from our side. */
  end(reason: SessionEndReason): void {
    if (this.ending && this.ending !== 'assistant-ended-call') return;
    this.ending = reason;
    this.reply?.controller.abort();
    this.options.output.end(reason);
    this.finish();
  }

  private finish(): void {
    if (!this.outcome) return;
    this.controller.abort();
    this.reply?.controller.abort();
    this.listening.close();
    const durationMs = this.time.audioMs;
    this.options.recorder?.finish();
    const resolve = this.outcome;
    this.outcome = undefined;
    resolve({
      reason: this.ending ?? 'customer-ended-call',
      transcript: this.transcript.turns(),
      latency: summarizeLatency(this.latencies),
      extracted: this.dialog.extracted(),
      durationMs,
    });
  }

  private onTranscript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void {
    this.emit({ type: 'transcript', final: event.type === 'final', text: event.text });
  }

  private onCallerTurn(turn: CallerTurn): void {
    const playing = this.reply && this.reply.playingSinceMs !== null ? this.reply : null;
    if (playing) {
      // Words that arrive once the caller has stopped (a batch STT) can still interrupt: the episode may have
      // resumed for lack of words in time. Backchannels and replies that may not be interrupted are not turns.
      if (!this.lateWordsInterrupt(turn.text)) return;
      this.emit({
        type: 'interruption',
        event: {
          type: 'interrupted',
          reason: findStopPhrase(normalizeWords(turn.text)) ? 'stop_phrase' : 'min_words',
          episode: 0,
          atMs: turn.atMs,
          evidence: { speechMs: 0, words: normalizeWords(turn.text), text: turn.text, thresholdMs: null },
        },
      });
      this.interrupt(playing);
    }
    this.emit({
      type: 'caller_turn',
      text: turn.text,
      atMs: turn.atMs,
      reason: turn.reason,
      endpointMs: turn.endpointMs,
    });
    this.transcript.add({
      speaker: 'caller',
      text: turn.text,
      startMs: Math.max(0, turn.speechEndMs - 1000),
      endMs: turn.speechEndMs,
      interrupted: false,
    });
    // A reply still being prepared for the previous words is replaced: the caller said more.
    if (this.reply) {
      this.reply.controller.abort();
      const last = this.history.at(-1);
      if (last?.role === 'user') {
        last.content = `${last.content} ${turn.text}`;
        void this.runTurn({ caller: turn, merged: true });
        return;
      }
    }
    this.history.push({ role: 'user', content: turn.text });
    void this.runTurn({ caller: turn });
  }

  private lateWordsInterrupt(text: string): boolean {
    const behavior = this.options.agent.behavior;
    if (behavior.interruptions === 'off' || !this.dialog.turnContext().allowInterrupt) return false;
    const words = normalizeWords(text);
    if (findStopPhrase(words)) return true;
    if (behavior.adaptive_interruptions && isBackchannel(words)) return false;
    return words.length >= Math.max(2, behavior.min_words);
  }

  private onInterruption(event: InterruptionEvent): void {
    this.emit({ type: 'interruption', event });
    const reply = this.reply;
    if (!reply) return;
    if (event.type === 'paused') this.playout.pause();
    else if (event.type === 'resumed' || event.type === 'ignored_backchannel') this.playout.resume();
    else if (event.type === 'interrupted') this.interrupt(reply);
  }

  private interrupt(reply: NonNullable<CallSession['reply']>): void {
    const heard = this.playout.flush(reply.id);
    reply.controller.abort();
    if (reply.playingSinceMs !== null) this.options.recorder?.cutAgentAfter(reply.playingSinceMs, heard.ms);
    // The model must know what the caller actually heard, not what it meant to say.
    const last = this.history.at(-1);
    if (last?.role === 'assistant' && !last.toolCalls) last.content = heard.text ? `${heard.text}…` : '';
    this.transcript.add({
      speaker: 'agent',
      text: heard.text,
      startMs: reply.playingSinceMs ?? reply.startedAtMs,
      endMs: (reply.playingSinceMs ?? reply.startedAtMs) + heard.ms,
      interrupted: true,
      ...(this.dialog.currentNode() ? { node: this.dialog.currentNode() as string } : {}),
    });
    this.reply = null;
    this.listening.agentStopped();
  }

  private async runTurn(
    trigger: { opening: string } | { caller: CallerTurn; merged?: boolean },
  ): Promise<void> {
    const controller = new AbortController();
    const id = `t${++this.turnSeq}`;
    const reply = { id, controller, startedAtMs: this.time.audioMs, playingSinceMs: null as number | null };
    this.reply = reply;
    this.playout.dropOtherTurns(id);
    const node = this.dialog.currentNode();
    const sink = {
      audio: (turnId: string, pcm: Int16Array, text: string) => {
        if (turnId !== this.reply?.id || controller.signal.aborted) return;
        if (reply.playingSinceMs === null) {
          reply.playingSinceMs = this.options.recorder?.agentPlayheadMs ?? this.time.audioMs;
          this.listening.agentStarted(this.dialog.turnContext().allowInterrupt);
        }
        this.playout.enqueue(turnId, pcm, text);
      },
    };
    let result: ReplyResult | undefined;
    try {
      if ('opening' in trigger) {
        result = await this.speakOpening(trigger.opening, id, controller.signal, sink);
      } else {
        result = await generateReply({
          turnId: id,
          signal: controller.signal,
          history: this.history,
          dialog: this.dialog,
          llm: this.options.engines.llm,
          speaker: this.options.engines.speaker,
          voice: { voiceId: this.options.agent.voice.voice_id, language: this.options.agent.voice.language },
          sink,
          wallNow: () => this.time.wallNow(),
        });
        for (const action of result.actions) {
          if (action.type === 'transition') {
            this.emit({
              type: 'transition',
              from: action.from,
              to: action.to,
              label: action.label,
              extracted: action.extracted,
            });
          }
        }
        this.recordLatency(id, trigger.caller, result);
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        this.emit({
          type: 'error',
          stage: 'llm',
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (this.reply !== reply || controller.signal.aborted || !result) return;
    await this.playout.drained();
    if (this.reply !== reply) return;
    this.reply = null;
    this.listening.agentStopped();
    this.emit({ type: 'agent_turn', turnId: id, text: result.text, atMs: this.time.audioMs });
    this.transcript.add({
      speaker: 'agent',
      text: result.text,
      startMs: reply.playingSinceMs ?? reply.startedAtMs,
      endMs: this.time.audioMs,
      interrupted: false,
      ...(node ? { node } : {}),
    });
    if (result.endCall) this.end('assistant-ended-call');
  }

  private async speakOpening(
    text: string,
    turnId: string,
    signal: AbortSignal,
    sink: { audio(turnId: string, pcm: Int16Array, text: string): void },
  ): Promise<ReplyResult> {
    this.history.push({ role: 'assistant', content: text });
    let first = true;
    for await (const chunk of this.options.engines.speaker.synthesize({
      voiceId: this.options.agent.voice.voice_id,
      language: this.options.agent.voice.language,
      text,
      signal,
    })) {
      sink.audio(turnId, chunk, first ? text : '');
      first = false;
    }
    return {
      text,
      actions: [],
      endCall: undefined,
      timings: { requestAtWallMs: this.time.wallNow() },
      aborted: signal.aborted,
    };
  }

  private recordLatency(turnId: string, caller: CallerTurn, result: ReplyResult): void {
    const t = result.timings;
    if (t.firstAudioAtWallMs === undefined) return;
    const speechEndWall = this.time.wallAt(caller.speechEndMs);
    const sttFinal = Math.max(0, caller.finalAtWallMs - speechEndWall);
    const llmFirstToken = (t.firstTokenAtWallMs ?? t.requestAtWallMs) - t.requestAtWallMs;
    const llmFirstClause = (t.firstClauseAtWallMs ?? t.requestAtWallMs) - t.requestAtWallMs;
    const ttsFirstAudio = t.firstAudioAtWallMs - (t.firstTtsRequestAtWallMs ?? t.firstAudioAtWallMs);
    const voiceToVoice = t.firstAudioAtWallMs - speechEndWall;
    const waited = Math.max(caller.endpointMs, sttFinal);
    const latency: TurnLatency = {
      endpoint_ms: caller.endpointMs,
      stt_final_ms: sttFinal,
      llm_first_token_ms: llmFirstToken,
      tts_first_audio_ms: ttsFirstAudio,
      voice_to_voice_ms: voiceToVoice,
      pipeline_overhead_ms: Math.max(0, voiceToVoice - waited - llmFirstClause - ttsFirstAudio),
    };
    this.latencies.push(latency);
    this.options.onLatency?.(latency);
    this.emit({ type: 'latency', turnId, latency });
  }

  private emit(event: SessionEvent): void {
    this.options.onEvent?.(event);
  }
}
