import { InsufficientBalanceError, type SpeechRecord, type Store } from '../store/types.ts';

/**
 * Money of text-to-speech requests. The price is known before synthesis (per character), so the request holds
 * it first: a wallet that cannot cover it is refused before any audio is made. A request whose audio was
 * synthesised captures the hold (its one ledger entry, kind `tts`, reference the `sp_` id) and records its
 * readback in the same transaction; one that failed releases it and costs nothing.
 */
export class SpeechCharges {
  constructor(private readonly store: Store) {}

  /** Holds `costPaise`; false when the wallet cannot cover it (nothing held then). */
  async reserve(workspaceId: string, speechId: string, costPaise: number): Promise<boolean> {
    try {
      await this.store.wallet.hold(workspaceId, { reference: speechId, amountPaise: costPaise, kind: 'tts' });
      return true;
    } catch (error) {
      if (error instanceof InsufficientBalanceError) return false;
      throw error;
    }
  }

  /** Charges the held amount and keeps the readback, in one transaction. */
  async complete(record: SpeechRecord): Promise<void> {
    await this.store.transaction(async (repos) => {
      await repos.wallet.capture(record.workspaceId, {
        reference: record.id,
        amountPaise: record.costPaise,
        description: `Text to speech, ${record.characters} characters`,
      });
      await repos.speech.create(record);
    });
  }

  async cancel(workspaceId: string, speechId: string): Promise<void> {
    await this.store.wallet.release(workspaceId, speechId);
  }

  get(workspaceId: string, speechId: string): Promise<SpeechRecord | undefined> {
    return this.store.speech.get(workspaceId, speechId);
  }
}
