import type { ChatMessage } from '../engines/llm/types.ts';
import type { CallTime } from './call-time.ts';
import { truncateToHeard } from './heard-context.ts';
import { DEFAULT_PLAYOUT, type HeardSoFar, Playout, type PlayoutSink } from './playout.ts';
import type { CallRecorder } from './recorder.ts';
import type { ReplyAudioSink, Speaker } from './reply.ts';
import type { Transcript } from './transcript.ts';

/** What an agent turn is for: the opening line, a reply, a line after an engine failure, a voicemail message. */
/** `said`: a line given by live control; `closing`: the last line before the agent hangs up. */
/** `reprompt`: a check on a caller who has gone silent. */
export type AgentTurnKind = 'opening' | 'reply' | 'fallback' | 'voicemail' | 'said' | 'closing' | 'reprompt';

/** One agent turn: its id tags its audio, its controller stops its model and speech. */
export interface AgentTurn {
  readonly id: string;
  readonly kind: AgentTurnKind;
  readonly controller: AbortController;
  /** Call time when the turn began. */
  readonly startedAtMs: number;
  /** The conversation's length when the turn began: the turn's messages follow. */
  readonly historyStart: number;
  /** The flow node the turn began on. */
  readonly node: string | undefined;
  /** Whether caller speech may interrupt it. */
  readonly interruptible: boolean;
  /** Call time when its first audio was to play; null until then. */
  playingSinceMs: number | null;
}

export interface AgentVoiceDeps {
  output: PlayoutSink;
  recorder: CallRecorder | undefined;
  time: CallTime;
  history: ChatMessage[];
  transcript: Transcript;
  /** Told when a turn's audio starts and when it stops (the interruption policy listens). */
  listening: { agentStarted(interruptible: boolean): void; agentStopped(): void };
}

/**
 * The agent's side of the call, one turn at a time: a turn's audio goes to the playout under its id; a new
 * turn replaces one still being prepared; stopping a turn (barge-in) flushes the carrier at once, aborts the
 * turn's model and speech, and rewrites the conversation and the transcript to what the caller heard. Audio of
 * a turn that is no longer current never reaches the carrier.
 */
export class AgentVoice {
  private readonly playout: Playout;
  private seq = 0;
  private active: AgentTurn | null = null;

  constructor(private readonly deps: AgentVoiceDeps) {
    this.playout = new Playout(
      {
        sendAudio: (pcm) => {
          deps.recorder?.agent(pcm);
          deps.output.sendAudio(pcm);
        },
        sendMark: (name) => deps.output.sendMark(name),
        clear: () => deps.output.clear(),
      },
      DEFAULT_PLAYOUT,
    );
  }

  /** The current turn, playing or being prepared. */
  get current(): AgentTurn | null {
    return this.active;
  }

  /** The current turn if its audio has started. */
  get playing(): AgentTurn | null {
    return this.active?.playingSinceMs != null ? this.active : null;
  }

  /** Starts a turn; one still current is stopped first (what was heard of it stays). */
  begin(kind: AgentTurnKind, options: { interruptible: boolean; node: string | undefined }): AgentTurn {
    if (this.active) this.stop(false);
    const turn: AgentTurn = {
      id: `t${++this.seq}`,
      kind,
      controller: new AbortController(),
      startedAtMs: this.deps.time.audioMs,
      historyStart: this.deps.history.length,
      node: options.node,
      interruptible: options.interruptible,
      playingSinceMs: null,
    };
    this.active = turn;
    this.playout.dropOtherTurns(turn.id);
    return turn;
  }

  /** Where a turn's audio goes. */
  sink(turn: AgentTurn): ReplyAudioSink {
    return {
      audio: (turnId, pcm, text) => {
        if (turnId !== turn.id || this.active !== turn || turn.controller.signal.aborted) return;
        if (turn.playingSinceMs === null) {
          turn.playingSinceMs = this.deps.recorder?.agentPlayheadMs ?? this.deps.time.audioMs;
          this.deps.listening.agentStarted(turn.interruptible);
        }
        this.playout.enqueue(turnId, pcm, text);
      },
    };
  }

  /** Speaks a fixed line in the turn (it joins the conversation first). Throws when speech fails. */
  async say(
    turn: AgentTurn,
    text: string,
    speaker: Speaker,
    voice: { voiceId: string; language: string },
  ): Promise<void> {
    this.deps.history.push({ role: 'assistant', content: text });
    const sink = this.sink(turn);
    let first = true;
    const signal = turn.controller.signal;
    for await (const chunk of speaker.synthesize({ ...voice, text, signal })) {
      if (signal.aborted) return;
      sink.audio(turn.id, chunk, first ? text : '');
      first = false;
    }
  }

  playbackAck(mark: string): void {
    this.playout.onPlaybackAck(mark);
  }

  /**
   * Stops the current turn now: the carrier is cleared, the model and speech aborted, and the conversation and
   * transcript keep only what the caller heard. Null when no turn is current.
   */
  stop(interrupted: boolean): { turn: AgentTurn; heard: HeardSoFar } | null {
    const turn = this.active;
    if (!turn) return null;
    const heard = this.playout.flush(turn.id);
    turn.controller.abort();
    if (turn.playingSinceMs !== null) this.deps.recorder?.cutAgentAfter(turn.playingSinceMs, heard.ms);
    truncateToHeard(this.deps.history, turn.historyStart, heard.text);
    this.close(turn, heard.text, (turn.playingSinceMs ?? turn.startedAtMs) + heard.ms, interrupted);
    return { turn, heard };
  }

  /**
   * Waits until the turn's audio has played out. Returns what was heard, or null when the turn was stopped or
   * replaced meanwhile. `rewrite`: the turn failed midway, so the conversation is set to what was heard.
   */
  async finish(turn: AgentTurn, rewrite: boolean): Promise<HeardSoFar | null> {
    await this.playout.drained();
    if (this.active !== turn || turn.controller.signal.aborted) return null;
    const heard = this.playout.heardOf(turn.id);
    if (rewrite) truncateToHeard(this.deps.history, turn.historyStart, heard.text);
    this.close(turn, heard.text, this.deps.time.audioMs, false);
    return heard;
  }

  private close(turn: AgentTurn, text: string, endMs: number, interrupted: boolean): void {
    this.deps.transcript.add({
      speaker: 'agent',
      text,
      startMs: turn.playingSinceMs ?? turn.startedAtMs,
      endMs,
      interrupted,
      ...(turn.node ? { node: turn.node } : {}),
    });
    this.active = null;
    this.playout.forget(turn.id);
    if (turn.playingSinceMs !== null) this.deps.listening.agentStopped();
  }
}
