/** Transcription jobs (`POST /v2/transcriptions`) and their workers' claims. */

export const TRANSCRIPTION_STATUSES = ['queued', 'running', 'completed', 'degraded', 'failed'] as const;
export type TranscriptionStatus = (typeof TRANSCRIPTION_STATUSES)[number];
export type EndedTranscriptionStatus = Exclude<TranscriptionStatus, 'queued' | 'running'>;

/** How a job's speakers were told apart. */
export type SpeakersMethod = 'channels' | 'voice_clusters' | 'none';

export interface TranscriptionSegmentRecord {
  speaker: string;
  startMs: number;
  endMs: number;
  text: string;
  language: string;
}

export interface TranscriptionRecord {
  id: string;
  workspaceId: string;
  status: TranscriptionStatus;
  languageCode: string;
  source: 'upload' | 'url';
  audioUrl: string | null;
  mediaType: string | null;
  audioBytes: number;
  durationMs: number | null;
  channels: number | null;
  segments: TranscriptionSegmentRecord[];
  speakersMethod: SpeakersMethod | null;
  failure: string | null;
  costPaise: number;
  attempts: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

export interface TranscriptionOutcome {
  status: EndedTranscriptionStatus;
  durationMs: number | null;
  channels: number | null;
  segments: TranscriptionSegmentRecord[];
  speakersMethod: SpeakersMethod | null;
  failure: string | null;
  costPaise: number;
}

export interface TranscriptionRepo {
  create(job: {
    id: string;
    workspaceId: string;
    languageCode: string;
    source: 'upload' | 'url';
    audioUrl: string | null;
    mediaType: string | null;
    audioBytes: number;
    durationMs: number | null;
    channels: number | null;
  }): Promise<TranscriptionRecord>;
  /** A job of the workspace created at or after `since` (older ones are past retention). */
  get(workspaceId: string, id: string, since: number): Promise<TranscriptionRecord | undefined>;
  /** Newest first; `after` is the id of the last item of the previous page. */
  list(
    workspaceId: string,
    options: { limit: number; after?: string | undefined; since: number },
  ): Promise<{ items: TranscriptionRecord[]; hasMore: boolean }>;
  /** Queued or running jobs nobody holds (never claimed, or the claim lapsed), oldest first. */
  claimable(limit: number): Promise<string[]>;
  /** Takes a job whose claim lapsed (it becomes `running`, `attempts` + 1); undefined when another has it. */
  claim(id: string, owner: string, leaseMs: number): Promise<TranscriptionRecord | undefined>;
  /** Extends the claim while `owner` holds it and the job runs; false otherwise. */
  renew(id: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Gives a running job's claim up so another worker takes it at once (the claim is not counted). */
  release(id: string, owner: string): Promise<void>;
  /** Writes what the worker learnt of the audio (its length and channels) while `owner` holds the job. */
  describe(id: string, owner: string, audio: { durationMs: number; channels: number }): Promise<boolean>;
  /**
   * Ends a running job held by `owner` (anyone when null) with its outcome; false when it had ended, was
   * deleted, or another worker holds it. Runs in the caller's transaction, beside the charge.
   */
  finish(id: string, owner: string | null, outcome: TranscriptionOutcome): Promise<boolean>;
  /** Deletes the workspace's job (its text); the record as it was, or undefined when there was none. */
  delete(workspaceId: string, id: string): Promise<TranscriptionRecord | undefined>;
  /** Jobs created before `before` (past retention), oldest first, at most `limit`. */
  createdBefore(before: number, limit: number): Promise<Array<{ id: string; workspaceId: string }>>;
}
