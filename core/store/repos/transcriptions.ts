import type { TranscriptionsTable } from '../db.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import {
  type SpeakersMethod,
  TRANSCRIPTION_STATUSES,
  type TranscriptionOutcome,
  type TranscriptionRecord,
  type TranscriptionRepo,
  type TranscriptionSegmentRecord,
  type TranscriptionStatus,
} from '../transcription-types.ts';
import { LeasedJobs } from './leased-jobs.ts';

const statusOf = (value: string): TranscriptionStatus =>
  (TRANSCRIPTION_STATUSES as readonly string[]).includes(value) ? (value as TranscriptionStatus) : 'failed';

const methodOf = (value: string | null): SpeakersMethod | null =>
  value === 'channels' || value === 'voice_clusters' || value === 'none' ? value : null;

const num = (value: number | null): number | null => (value === null ? null : Number(value));

function toRecord(row: TranscriptionsTable): TranscriptionRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    status: statusOf(row.status),
    languageCode: row.language_code,
    source: row.source === 'url' ? 'url' : 'upload',
    audioUrl: row.audio_url,
    mediaType: row.media_type,
    audioBytes: Number(row.audio_bytes),
    durationMs: num(row.duration_ms),
    channels: num(row.channels),
    segments: row.segments ? (JSON.parse(row.segments) as TranscriptionSegmentRecord[]) : [],
    speakersMethod: methodOf(row.speakers_method),
    failure: row.failure,
    costPaise: Number(row.cost_paise),
    attempts: Number(row.attempts),
    leaseOwner: row.lease_owner,
    leaseUntil: num(row.lease_until),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    endedAt: num(row.ended_at),
  };
}

const OPEN: TranscriptionStatus[] = ['queued', 'running'];

/** Transcription jobs and their workers' claims. */
export class TranscriptionStore implements TranscriptionRepo {
  private readonly jobs: LeasedJobs<'transcriptions', TranscriptionRecord>;

  constructor(private readonly scope: Scope) {
    this.jobs = new LeasedJobs(scope, 'transcriptions', OPEN, toRecord);
  }

  async create(job: Parameters<TranscriptionRepo['create']>[0]): Promise<TranscriptionRecord> {
    const now = this.scope.now;
    const row: TranscriptionsTable = {
      id: job.id,
      workspace_id: job.workspaceId,
      status: 'queued',
      language_code: job.languageCode,
      source: job.source,
      audio_url: job.audioUrl,
      media_type: job.mediaType,
      audio_bytes: job.audioBytes,
      duration_ms: job.durationMs,
      channels: job.channels,
      segments: null,
      speakers_method: null,
      failure: null,
      cost_paise: 0,
      attempts: 0,
      lease_owner: null,
      lease_until: null,
      created_at: now,
      updated_at: now,
      ended_at: null,
    };
    await this.scope.db.insertInto('transcriptions').values(row).execute();
    return toRecord(row);
  }

  get(workspaceId: string, id: string, since: number): Promise<TranscriptionRecord | undefined> {
    return this.jobs.get(workspaceId, id, since);
  }

  async list(
    workspaceId: string,
    options: { limit: number; after?: string | undefined; since: number },
  ): Promise<{ items: TranscriptionRecord[]; hasMore: boolean }> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('transcriptions')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '>=', options.since)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toRecord);
  }

  claimable(limit: number): Promise<string[]> {
    return this.jobs.claimable(limit);
  }

  claim(id: string, owner: string, leaseMs: number): Promise<TranscriptionRecord | undefined> {
    return this.jobs.claim(id, owner, leaseMs, (now, eb) => ({
      status: 'running',
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    }));
  }

  renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
    return this.jobs.renew(id, owner, leaseMs);
  }

  release(id: string, owner: string): Promise<void> {
    // A job handed back by a worker that stops was not its worker's death: the claim does not count.
    return this.jobs.release(id, owner, (_now, eb) => ({ attempts: eb('attempts', '-', 1) }));
  }

  describe(id: string, owner: string, audio: { durationMs: number; channels: number }): Promise<boolean> {
    return this.jobs.whileHeld(id, owner, (now) => ({
      duration_ms: Math.round(audio.durationMs),
      channels: audio.channels,
      updated_at: now,
    }));
  }

  finish(id: string, owner: string | null, outcome: TranscriptionOutcome): Promise<boolean> {
    return this.jobs.finish(id, owner, () => ({
      status: outcome.status,
      duration_ms: outcome.durationMs === null ? null : Math.round(outcome.durationMs),
      channels: outcome.channels,
      segments: JSON.stringify(outcome.segments),
      speakers_method: outcome.speakersMethod,
      failure: outcome.failure,
      cost_paise: outcome.costPaise,
    }));
  }

  async delete(workspaceId: string, id: string): Promise<TranscriptionRecord | undefined> {
    return this.scope.transaction(async ({ db }) => {
      const row = await db
        .selectFrom('transcriptions')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      await db.deleteFrom('transcriptions').where('id', '=', id).execute();
      return toRecord(row);
    });
  }

  async createdBefore(before: number, limit: number): Promise<Array<{ id: string; workspaceId: string }>> {
    const rows = await this.scope.db
      .selectFrom('transcriptions')
      .select(['id', 'workspace_id'])
      .where('created_at', '<', before)
      .orderBy('created_at', 'asc')
      .limit(assertLimit(limit))
      .execute();
    return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
  }
}
