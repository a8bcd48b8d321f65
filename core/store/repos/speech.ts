import type { SpeechRequestsTable } from '../db.ts';
import type { Scope } from '../scope.ts';
import type { SpeechRecord, SpeechRepo } from '../speech-types.ts';

const toRecord = (row: SpeechRequestsTable): SpeechRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  voiceId: row.voice_id,
  format: row.format,
  sampleRate: Number(row.sample_rate),
  characters: Number(row.characters),
  audioMs: Number(row.audio_ms),
  costPaise: Number(row.cost_paise),
  createdAt: Number(row.created_at),
});

/** Text-to-speech requests, for their cost readback. */
export class SpeechStore implements SpeechRepo {
  constructor(private readonly scope: Scope) {}

  async create(record: SpeechRecord): Promise<void> {
    await this.scope.db
      .insertInto('speech_requests')
      .values({
        id: record.id,
        workspace_id: record.workspaceId,
        voice_id: record.voiceId,
        format: record.format,
        sample_rate: record.sampleRate,
        characters: record.characters,
        audio_ms: record.audioMs,
        cost_paise: record.costPaise,
        created_at: record.createdAt,
      })
      .execute();
  }

  async get(workspaceId: string, id: string): Promise<SpeechRecord | undefined> {
    const row = await this.scope.db
      .selectFrom('speech_requests')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }
}
