/**
 * `POST /v2/agents/flow/transcribe` for a call of the workspace: its recording turned into an `AGENT:`/`CALLER:`
 * transcript, one turn per line, ready to pass as a flow test's `calls` or `examples`. A call's recording is two
 * channels, transcribed by channel as the call went (the agent's words as spoken, the caller's by the call's
 * speech engine), so the call's own transcript is that transcript. Priced as transcriptions: ₹18 an hour of
 * audio, rounded up to a paisa, as one `transcription` transaction (once per call, however often it is asked).
 * Uploaded recordings are not transcribed yet.
 */
import type { CallArtifacts } from '../calls/artifacts.ts';
import { ApiError, notFound } from '../errors.ts';
import { paiseToRupees } from '../money.ts';
import { InsufficientBalanceError, type Store } from '../store/types.ts';
import { formatTurns, type Turn } from './jobs/transcripts.ts';

/** ₹18 an hour: paise per hour of audio. */
const PAISE_PER_HOUR = 1_800;
const MS_PER_HOUR = 3_600_000;
/** What a caller turn without recognised words reads as. */
const UNHEARD = '(unclear)';

export class FlowTranscripts {
  constructor(
    private readonly store: Store,
    private readonly artifacts: CallArtifacts,
  ) {}

  async ofCall(workspaceId: string, callId: string) {
    const call = await this.store.calls.get(workspaceId, callId);
    if (!call) throw notFound(`call ${callId}`);
    const entries = await this.artifacts.readTranscript(workspaceId, callId);
    if (!entries) throw notFound(`transcript of call ${callId} (it has not ended, or it recorded nothing)`);
    const turns: Turn[] = [];
    for (const entry of entries) {
      const speaker = entry.speaker === 'agent' ? 'AGENT' : 'CALLER';
      const text = entry.text.replace(/\s+/g, ' ').trim() || (entry.recognized === false ? UNHEARD : '');
      if (!text) continue;
      const last = turns[turns.length - 1];
      if (last?.speaker === speaker) last.text = `${last.text} ${text}`;
      else turns.push({ speaker, text });
    }
    const audioMs = Math.max(call.durationSecs * 1000, ...entries.map((e) => e.end_ms), 0);
    const paise = Math.ceil((audioMs * PAISE_PER_HOUR) / MS_PER_HOUR);
    const transactionId = await this.charge(workspaceId, callId, paise);
    return {
      object: 'flow_transcript' as const,
      call_id: callId,
      transcript: formatTurns(turns),
      turns: turns.length,
      audio_secs: Math.round(audioMs / 1000),
      cost: { amount_inr: paiseToRupees(paise), transaction_id: transactionId },
    };
  }

  private async charge(workspaceId: string, callId: string, paise: number): Promise<string | null> {
    if (paise <= 0) return null;
    try {
      const entry = await this.store.wallet.debit(workspaceId, {
        amountPaise: paise,
        // One transcription of a call is charged once, however often it is asked for.
        reference: `flow-transcript:${callId}`,
        kind: 'transcription',
        description: `Transcript of call ${callId}`,
      });
      return entry.id;
    } catch (error) {
      if (error instanceof InsufficientBalanceError) {
        throw new ApiError(
          'insufficient_balance',
          'the wallet cannot cover the transcription; nothing was charged',
        );
      }
      throw error;
    }
  }
}
