/** One text-to-speech request that was synthesised and charged: its cost readback. */
export interface SpeechRecord {
  id: string;
  workspaceId: string;
  voiceId: string;
  format: string;
  sampleRate: number;
  characters: number;
  audioMs: number;
  costPaise: number;
  createdAt: number;
}

export interface SpeechRepo {
  /** Records a request; written in the transaction that charges it. */
  create(record: SpeechRecord): Promise<void>;
  get(workspaceId: string, id: string): Promise<SpeechRecord | undefined>;
}
