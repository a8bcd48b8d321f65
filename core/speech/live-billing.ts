import type { Paise } from '../money.ts';
import type { Store } from '../store/types.ts';
import {
  billedAudioSeconds,
  LIVE_STT_MINIMUM_SECONDS,
  TRANSCRIPTION_PER_MINUTE_PAISE,
  transcriptionCost,
} from './prices.ts';

export interface LiveTranscriptionCharge {
  audioSecondsBilled: number;
  costPaise: Paise;
}

/**
 * Money of live speech-to-text sessions. A session starts only when the wallet's available balance covers a
 * minute of audio; it holds nothing meanwhile (a hold would outlive a node that dies mid-session), and at its
 * end the audio it received is debited in one ledger entry (kind `transcription`, reference the session id),
 * idempotent on that reference, so a session is never billed twice. The debit never overdraws: when calls or
 * other sessions spent the balance meanwhile, the entry takes what is left and the session reports that.
 */
export class LiveTranscriptionBilling {
  constructor(private readonly store: Store) {}

  /** The least a wallet must have available for a session to start. */
  static readonly minimumPaise: Paise = transcriptionCost(LIVE_STT_MINIMUM_SECONDS);

  static readonly perMinutePaise: Paise = TRANSCRIPTION_PER_MINUTE_PAISE;

  async canStart(workspaceId: string): Promise<boolean> {
    const { availablePaise } = await this.store.wallet.balance(workspaceId);
    return availablePaise >= LiveTranscriptionBilling.minimumPaise;
  }

  /** Debits the session's audio; answers what was billed (the ledger entry's amount). */
  async settle(workspaceId: string, sessionId: string, audioMs: number): Promise<LiveTranscriptionCharge> {
    const audioSecondsBilled = billedAudioSeconds(audioMs);
    const cost = transcriptionCost(audioSecondsBilled);
    if (cost === 0) return { audioSecondsBilled, costPaise: 0 };
    return this.store.transaction(async (repos) => {
      const { availablePaise } = await repos.wallet.balance(workspaceId);
      const charge = Math.min(cost, Math.max(0, availablePaise));
      if (charge === 0) return { audioSecondsBilled, costPaise: 0 };
      const entry = await repos.wallet.debit(workspaceId, {
        amountPaise: charge,
        reference: sessionId,
        kind: 'transcription',
        description: `Live speech to text, ${audioSecondsBilled} s of audio`,
      });
      return { audioSecondsBilled, costPaise: -entry.amountPaise };
    });
  }
}
