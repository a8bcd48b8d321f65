import { InsufficientBalanceError, type Store } from '../store/types.ts';

/**
 * Money of a transcription: its price is known from the audio's length before any work, so it is held first
 * (a wallet that cannot cover it is refused with nothing done), captured in one ledger entry (kind
 * `transcription`, reference the `trn_` id) when the job completes, and released when it fails or is degraded
 * (those are free).
 */
export class TranscriptionCharges {
  constructor(private readonly store: Store) {}

  async reserve(workspaceId: string, id: string, costPaise: number): Promise<boolean> {
    try {
      await this.store.wallet.hold(workspaceId, {
        reference: id,
        amountPaise: costPaise,
        kind: 'transcription',
      });
      return true;
    } catch (error) {
      if (error instanceof InsufficientBalanceError) return false;
      throw error;
    }
  }

  /** Charges the held price (0 when the job is free) and answers what was charged. */
  async settle(workspaceId: string, id: string, charge: boolean, description: string): Promise<number> {
    if (!charge) {
      await this.store.wallet.release(workspaceId, id);
      return 0;
    }
    const hold = await this.store.wallet.getHold(workspaceId, id);
    const captured = await this.store.wallet.capture(workspaceId, {
      reference: id,
      amountPaise: hold?.amountPaise ?? 0,
      description,
    });
    return captured.capturedPaise;
  }
}
