import type { CallLatency, TurnLatency } from '../core/store/call-latency.ts';
import type { CallTime } from './call-time.ts';
import { summarizeLatency } from './metrics.ts';
import type { ReplyTimings } from './reply.ts';
import type { CallerTurn } from './turn/turn-taking.ts';

/** The terms the overhead leaves out that are not metrics of their own, as measured for one turn. */
export interface LatencyAccount {
  /** From the caller stopping to the turn being decided (at least the endpoint silence and the STT final). */
  decisionWaitMs: number;
  /** From the model request to the first complete clause handed to speech. */
  llmFirstClauseMs: number;
}

/**
 * One agent turn's latency (metrics.ts) from the caller's turn and the reply's wall-clock timings. The caller
 * stopping speaking is call time; it is mapped to wall time by when that audio arrived. Null when the reply
 * produced no audio (nothing to measure voice to voice).
 *
 * The overhead is what the platform adds: voice to voice less the wait for the turn to end (the endpointing
 * silence, or the STT final when it came later, or whatever else held the decision, such as the caller's words
 * still arriving) and less the engines' time to first clause and first audio. Measuring the wait up to the
 * decision itself, not a sum of its expected parts, keeps a slow final or a held turn out of the overhead.
 */
export function measureTurn(
  caller: CallerTurn,
  t: ReplyTimings,
  time: CallTime,
): { latency: TurnLatency; account: LatencyAccount } | null {
  if (t.firstAudioAtWallMs === undefined) return null;
  const speechEndWall = time.wallAt(caller.speechEndMs);
  const sttFinal = Math.max(0, caller.finalAtWallMs - speechEndWall);
  const llmFirstToken = (t.firstTokenAtWallMs ?? t.requestAtWallMs) - t.requestAtWallMs;
  const llmFirstClause = (t.firstClauseAtWallMs ?? t.requestAtWallMs) - t.requestAtWallMs;
  const ttsFirstAudio = t.firstAudioAtWallMs - (t.firstTtsRequestAtWallMs ?? t.firstAudioAtWallMs);
  const voiceToVoice = t.firstAudioAtWallMs - speechEndWall;
  const waited = Math.max(caller.endpointMs, sttFinal, caller.decidedAtWallMs - speechEndWall);
  const latency: TurnLatency = {
    endpoint_ms: caller.endpointMs,
    stt_final_ms: sttFinal,
    llm_first_token_ms: llmFirstToken,
    tts_first_audio_ms: ttsFirstAudio,
    voice_to_voice_ms: voiceToVoice,
    pipeline_overhead_ms: Math.max(0, voiceToVoice - waited - llmFirstClause - ttsFirstAudio),
  };
  return { latency, account: { decisionWaitMs: waited, llmFirstClauseMs: llmFirstClause } };
}

/** The call's per-turn latencies: each is handed on as measured, and summarized when the call ends. */
export class LatencyLog {
  private readonly turns: TurnLatency[] = [];

  constructor(
    private readonly time: CallTime,
    private readonly onLatency?: (
      latency: TurnLatency,
      account: LatencyAccount,
      turn: { recognized: boolean },
    ) => void,
  ) {}

  /** Measures a reply to a caller's turn; null when it produced no audio. */
  record(caller: CallerTurn, timings: ReplyTimings): TurnLatency | null {
    const measured = measureTurn(caller, timings, this.time);
    if (!measured) return null;
    this.turns.push(measured.latency);
    this.onLatency?.(measured.latency, measured.account, { recognized: caller.recognized });
    return measured.latency;
  }

  summary(): CallLatency | null {
    return summarizeLatency(this.turns);
  }
}
